// A child process spoken to in lines: stdin and stdout on pipes, stderr on a third pipe of which
// the last lines are kept (the "last words" of a worker that dies). POSIX: posix_spawn, poll,
// waitpid, kill.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace attnprof {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Spawns argv[0] with `argv`, in a process group of its own: Ctrl-C at a terminal goes to the
  // supervisor only, which decides what becomes of the point in flight. SIGINT, SIGTERM and
  // SIGPIPE are reset to their default actions in the child. `env` holds "NAME=value" entries
  // that replace (or add to) this process's environment in the child. Throws
  // std::runtime_error.
  explicit ChildProcess(const std::vector<std::string>& argv,
                        const std::vector<std::string>& env = {});
  // Kills the child if it still runs, and reaps it.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Writes `line` and a newline to the child's stdin. False when the child no longer reads it
  // (it exited: EPIPE; the SIGPIPE that comes with it is absorbed).
  bool write_line(const std::string& line);

  enum class Wait { line, eof, timeout, stopped };
  // Waits for one line on the child's stdout (returned without its newline) while collecting
  // stderr: `eof` when stdout closes (the child died or exited), `timeout` at `deadline`,
  // `stopped` as soon as `stop()` is true (checked on every wake-up and at least every 100 ms).
  Wait read_line(std::string& line, Clock::time_point deadline, const std::function<bool()>& stop);

  // The last lines the child wrote to stderr since clear_stderr(), oldest first (at most
  // kStderrLines, each cut to kStderrLineChars).
  std::vector<std::string> stderr_tail() const;
  void clear_stderr();
  static constexpr std::size_t kStderrLines = 20;
  static constexpr std::size_t kStderrLineChars = 400;

  // Reaps a child that is exiting (after `eof`): waits up to `grace`, then kills it. Collects
  // what is left on stderr. Returns the waitpid status. Idempotent.
  int reap(std::chrono::milliseconds grace);
  // Closes stdin (a worker's cue to exit), then reap(grace).
  int finish(std::chrono::milliseconds grace);
  // SIGKILL to the child's process group, then reaps it. Returns the waitpid status.
  int kill_and_reap();
  // Whether the child has exited already (reaps it if so).
  bool exited();

  // Whether the child's end came from kill_and_reap() (or reap() running out of grace).
  bool killed_here() const { return killed_here_; }

  // Called with each stderr line of the child as it comes (while read_line or reap reads it),
  // besides keeping the tail: a worker's one-line notices ("attnprof: measuring the ceilings
  // ...") are echoed, a GPU's share relays all its lines.
  using LineHandler = std::function<void(const std::string&)>;
  void on_stderr_line(LineHandler handler) { on_stderr_line_ = std::move(handler); }

 private:
  void read_stderr();
  void push_stderr_line(std::string line);
  void close_fd(int& fd);

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;  // our ends: child's stdin, stdout, stderr
  std::string out_buffer_, err_partial_;
  std::deque<std::string> err_lines_;
  LineHandler on_stderr_line_;
  bool reaped_ = false;
  int status_ = 0;
  bool killed_here_ = false;
};

// "SIGSEGV", "SIGABRT", ... ("signal 42" where unknown).
std::string signal_name(int sig);
// A waitpid status in words: "killed by SIGSEGV (Segmentation fault)", "exited with status 3".
std::string describe_wait_status(int status);

}  // namespace attnprof
