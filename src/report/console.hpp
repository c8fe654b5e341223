// Console sink internals, exposed for tests: the clock is injectable so progress and ETA lines
// can be checked exactly.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "attnprof/sink.hpp"

namespace attnprof {

// Monotonic seconds; any origin.
using SecondsClock = std::function<double()>;

std::unique_ptr<Sink> make_console_sink(std::ostream& os, bool tty, SecondsClock clock,
                                        std::size_t provider_width = 0);

// Seconds as "mm:ss", or "h:mm:ss" from one hour; "--:--" when unknown (negative or NaN).
std::string format_clock(double seconds);

}  // namespace attnprof
