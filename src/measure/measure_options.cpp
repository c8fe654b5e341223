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

std::string_view to_string(TimingMode m) {
  switch (m) {
    case TimingMode::cold:
      return "cold";
    case TimingMode::hot:
      return "hot";
    case TimingMode::graph:
      return "graph";
    case TimingMode::wall:
      return "wall";
  }
  return "?";
}

std::optional<TimingMode> parse_timing_mode(std::string_view s) {
  for (TimingMode m : {TimingMode::cold, TimingMode::hot, TimingMode::graph, TimingMode::wall})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

}  // namespace attnprof
