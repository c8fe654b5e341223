#include "attnprof/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace attnprof {

namespace {

[[noreturn]] void sys_error(const char* what) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

// A pipe whose ends are closed on exec: only the ends dup2'ed onto 0, 1, 2 reach the child, and
// no other child spawned meanwhile inherits them.
void make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) sys_error("pipe2");
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) sys_error("fcntl");
}

// posix_spawn's attribute and file-action objects, released on every path.
struct SpawnSetup {
  posix_spawnattr_t attr{};
  posix_spawn_file_actions_t actions{};
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// This process's environment with `overrides` ("NAME=value") replacing or adding entries.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    const std::string name = name_of(entry);
    const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const std::string& o) { return name_of(o) == name; });
    if (!replaced) env.push_back(std::move(entry));
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env) {
  int in[2], out[2], err[2];
  make_pipe(in);
  make_pipe(out);
  make_pipe(err);
  const auto close_all = [&] {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
  };

  SpawnSetup s;
  posix_spawn_file_actions_adddup2(&s.actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&s.actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&s.actions, err[1], STDERR_FILENO);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setpgroup(&s.attr, 0);
  posix_spawnattr_setflags(&s.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> environment = child_environment(env);
  std::vector<char*> envp;
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, args[0], &s.actions, &s.attr, args.data(), envp.data());
  if (rc != 0) {
    close_all();
    throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  set_nonblocking(out_);
  set_nonblocking(err_);
}

ChildProcess::~ChildProcess() {
  if (!reaped_) kill_and_reap();
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

void ChildProcess::close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool ChildProcess::write_line(const std::string& line) {
  if (in_ < 0) return false;
  // A child that died makes the write fail with EPIPE and raise SIGPIPE, whose default action
  // would end the supervisor. Block it in this thread for the write and take back the one the
  // write raised; the process's disposition stays as it is (`attnprof run | head` still ends).
  sigset_t pipe_only, old_mask;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  sigset_t pending;
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGPIPE) == 1;

  const std::string data = line + '\n';
  std::size_t done = 0;
  bool ok = true;
  while (done < data.size()) {
    const ssize_t n = ::write(in_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;  // EPIPE: the child is gone
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (!ok && !already_pending) {
    const timespec no_wait{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &no_wait) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return ok;
}

ChildProcess::Wait ChildProcess::read_line(std::string& line, Clock::time_point deadline,
                                           const std::function<bool()>& stop) {
  constexpr auto kSlice = std::chrono::milliseconds(100);
  for (;;) {
    if (const std::size_t nl = out_buffer_.find('\n'); nl != std::string::npos) {
      line = out_buffer_.substr(0, nl);
      out_buffer_.erase(0, nl + 1);
      return Wait::line;
    }
    if (out_ < 0) return Wait::eof;
    if (stop && stop()) return Wait::stopped;
    const auto now = Clock::now();
    if (now >= deadline) return Wait::timeout;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const nfds_t count = err_ >= 0 ? 2 : 1;
    const int rc = ::poll(fds, count, static_cast<int>(std::min(left, kSlice).count()));
    if (rc < 0) {
      if (errno == EINTR) continue;  // a stop signal, most likely: stop() says
      sys_error("poll");
    }
    if (count == 2 && fds[1].revents != 0) read_stderr();
    if (fds[0].revents != 0) {
      char buf[64 * 1024];
      for (;;) {
        const ssize_t n = ::read(out_, buf, sizeof buf);
        if (n > 0) {
          out_buffer_.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0)
          close_fd(out_);  // end of file: the child closed stdout or died
        else if (errno == EINTR)
          continue;
        else if (errno != EAGAIN)
          close_fd(out_);
        break;
      }
    }
  }
}

void ChildProcess::read_stderr() {
  if (err_ < 0) return;
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = ::read(err_, buf, sizeof buf);
    if (n > 0) {
      err_partial_.append(buf, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = err_partial_.find('\n')) != std::string::npos) {
        push_stderr_line(err_partial_.substr(0, nl));
        err_partial_.erase(0, nl + 1);
      }
      // A line that never ends is kept to its first kStderrLineChars characters.
      if (err_partial_.size() > 4 * kStderrLineChars) err_partial_.resize(kStderrLineChars);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) {
      if (!err_partial_.empty()) push_stderr_line(std::move(err_partial_));
      err_partial_.clear();
      close_fd(err_);
    }
    return;
  }
}

void ChildProcess::push_stderr_line(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (on_stderr_line_) on_stderr_line_(line);
  if (line.find_first_not_of(" \t") == std::string::npos) return;
  if (line.size() > kStderrLineChars) line = line.substr(0, kStderrLineChars) + "...";
  err_lines_.push_back(std::move(line));
  if (err_lines_.size() > kStderrLines) err_lines_.pop_front();
}

std::vector<std::string> ChildProcess::stderr_tail() const {
  std::vector<std::string> lines(err_lines_.begin(), err_lines_.end());
  if (!err_partial_.empty()) lines.push_back(err_partial_.substr(0, kStderrLineChars));
  return lines;
}

void ChildProcess::clear_stderr() {
  read_stderr();
  err_lines_.clear();
  err_partial_.clear();
}

bool ChildProcess::exited() {
  if (reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = status;
    read_stderr();
  }
  return reaped_;
}

int ChildProcess::reap(std::chrono::milliseconds grace) {
  const auto deadline = Clock::now() + grace;
  while (!exited()) {
    if (Clock::now() >= deadline) return kill_and_reap();
    // Collect stderr while waiting: a child blocked writing to a full pipe would never exit.
    read_stderr();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The child is gone; its stderr pipe has every byte it wrote, unless a grandchild holds it.
  read_stderr();
  return status_;
}

int ChildProcess::finish(std::chrono::milliseconds grace) {
  close_fd(in_);
  return reap(grace);
}

int ChildProcess::kill_and_reap() {
  if (reaped_) return status_;
  killed_here_ = true;
  // The whole group: the worker and anything it started.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  status_ = status;
  read_stderr();
  return status_;
}

std::string signal_name(int sig) {
  if (const char* abbrev = sigabbrev_np(sig)) return fmt::format("SIG{}", abbrev);
  return fmt::format("signal {}", sig);
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* what = sigdescr_np(sig);
    return fmt::format("killed by {}{}{}", signal_name(sig), what ? fmt::format(" ({})", what) : "",
                       WCOREDUMP(status) ? ", core dumped" : "");
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("ended with wait status {:#x}", status);
}

}  // namespace attnprof
