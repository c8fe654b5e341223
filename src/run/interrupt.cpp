#include "attnprof/interrupt.hpp"

#include <unistd.h>

#include <csignal>
#include <stdexcept>

namespace attnprof {

namespace {

// Signal handlers take no argument: the request they feed lives here while a StopSignals is
// alive. This and the saved dispositions are the only process-wide state of a sweep.
std::atomic<StopRequest*> g_request{nullptr};
std::atomic<bool> g_second_kills{false};
struct sigaction g_old_int {
}, g_old_term{};

void write_stderr(const char* text, std::size_t size) {
  // write(2) is async-signal-safe; stdio is not. A failed write changes nothing here.
  const ssize_t ignored = ::write(STDERR_FILENO, text, size);
  (void)ignored;
}

void on_stop_signal(int sig) {
  StopRequest* r = g_request.load();
  if (r == nullptr) return;
  int expected = 0;
  r->signal.compare_exchange_strong(expected, sig);
  const int n = r->count.fetch_add(1) + 1;
  if (n == 1) {
    static constexpr char kFirst[] =
        "\nattnprof: stopping after the point in flight (Ctrl-C again to stop at once)\n";
    write_stderr(kFirst, sizeof kFirst - 1);
  } else if (n == 2 && g_second_kills.load()) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

}  // namespace

StopSignals::StopSignals(StopRequest& request, bool second_kills) {
  StopRequest* expected = nullptr;
  if (!g_request.compare_exchange_strong(expected, &request)) {
    throw std::logic_error("StopSignals: another sweep already owns SIGINT and SIGTERM");
  }
  g_second_kills = second_kills;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a supervisor blocked in poll() wakes at once with EINTR and sees the request.
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_request = nullptr;
}

std::string_view signal_text(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "a signal";
}

}  // namespace attnprof
