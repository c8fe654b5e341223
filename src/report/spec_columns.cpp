#include "report/spec_columns.hpp"

#include <algorithm>

namespace attnprof {

std::vector<const Axis*> spec_axes() {
  std::vector<const Axis*> out;
  for (const Axis& a : axes()) {
    if (!a.json.empty()) out.push_back(&a);
  }
  return out;
}

std::string spec_cell(const Axis& axis, const Spec& spec) {
  const std::string v = axis.get(spec);
  if (axis.kind == AxisKind::boolean) return v == "on" ? "true" : "false";
  return v;
}

SpecAxesSplit split_spec_axes(const std::vector<Result>& rows) {
  SpecAxesSplit out;
  for (const Axis* a : spec_axes()) {
    const bool varies = std::any_of(rows.begin(), rows.end(), [&](const Result& r) {
      return spec_cell(*a, r.spec) != spec_cell(*a, rows.front().spec);
    });
    (varies ? out.varying : out.fixed).push_back(a);
  }
  return out;
}

}  // namespace attnprof
