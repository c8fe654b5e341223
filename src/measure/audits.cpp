// The audits of engine.hpp that every engine and the point lifecycle share.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "attnprof/engine.hpp"

namespace attnprof {

namespace {

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

}  // namespace

void require_untouched(PointTensors& tensors, std::string_view after) {
  const TensorAudit a = tensors.audit();
  if (!a.overrun.empty()) {
    throw FaultError(Fault::out_of_bounds,
                     fmt::format("the provider wrote past the end of {} (the guard bytes after it "
                                 "changed; seen after {})",
                                 join(a.overrun, ", "), after));
  }
  if (!a.modified.empty()) {
    throw FaultError(Fault::modified_inputs,
                     fmt::format("the provider changed its input {} (seen after {}); a launch must "
                                 "leave its inputs as the harness wrote them",
                                 join(a.modified, ", "), after));
  }
}

void require_written(PointTensors& tensors, std::string_view launch) {
  if (const std::vector<std::string> u = tensors.unwritten(); !u.empty()) {
    throw FaultError(Fault::unwritten,
                     fmt::format("{} left outputs holding the poison the harness wrote before it "
                                 "(not written): {}",
                                 launch, join(u, "; ")));
  }
}

}  // namespace attnprof
