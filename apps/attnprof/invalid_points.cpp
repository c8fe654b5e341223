#include "invalid_points.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace attnprof::cli {

std::string invalid_reason(const Spec& spec) {
  std::string reason;
  for (const std::string& error : spec.validate()) {
    reason += (reason.empty() ? "" : "; ") + error;
  }
  return reason;
}

void require_a_valid_spec(const std::vector<Spec>& specs) {
  std::string first;
  for (const Spec& s : specs) {
    const std::string why = invalid_reason(s);
    if (why.empty()) return;
    if (first.empty()) first = fmt::format("point {}: {}", s.label(), why);
  }
  if (!first.empty()) throw std::invalid_argument(first);
}

}  // namespace attnprof::cli
