#include "invalid_points.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "attnprof/env.hpp"

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

std::optional<Result> InvalidPointFilter::run(const Point& point) {
  std::string why = invalid_reason(point.spec);
  if (why.empty()) return inner_.run(point);
  Result r;
  r.provider = point.provider->name();
  r.spec = point.spec;
  r.status = Status::not_supported;
  r.reason = std::move(why);
  r.started_at = utc_now_iso8601();
  return r;
}

}  // namespace attnprof::cli
