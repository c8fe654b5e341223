// Ctrl-C and SIGTERM during a sweep. The first signal asks the sweep to stop after the point in
// flight; the second to stop at once (the supervisor kills its worker and the point in flight
// gets no row; in-process, the process dies of the signal). Either way every finished row is in
// the journal, which stays valid, and `--resume` picks up from there.
#pragma once

#include <atomic>
#include <string_view>

namespace attnprof {

// Written by the signal handler (lock-free atomics only), read by the sweep and the supervisor.
struct StopRequest {
  std::atomic<int> count{0};   // stop signals received
  std::atomic<int> signal{0};  // the first one's number

  bool stop_after_point() const { return count.load(std::memory_order_relaxed) >= 1; }
  bool stop_now() const { return count.load(std::memory_order_relaxed) >= 2; }
};

// Routes SIGINT and SIGTERM to `request` while alive; restores the previous handlers after.
// One at a time per process: signal dispositions are process-wide.
// `second_kills`: on the second signal, restore the default action and re-raise it (for the
// in-process path, where nothing else can abandon the point in flight).
class StopSignals {
 public:
  StopSignals(StopRequest& request, bool second_kills);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

// "SIGINT", "SIGTERM" (the signals StopSignals routes), "a signal" for any other.
std::string_view signal_text(int signal);

}  // namespace attnprof
