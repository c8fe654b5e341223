#include "attnprof/engine.hpp"

namespace attnprof {

std::string_view to_string(ClockPolicy p) {
  return p == ClockPolicy::recover ? "recover" : "sustained";
}

std::optional<ClockPolicy> parse_clock_policy(std::string_view s) {
  if (s == "sustained") return ClockPolicy::sustained;
  if (s == "recover") return ClockPolicy::recover;
  return std::nullopt;
}

}  // namespace attnprof
