// A spec as table columns, taken from the axis table (attnprof/axes.hpp): one column per axis the
// row codec writes, named by its JSON field, in the table's order. The CSV writes all of them;
// the Markdown table those whose values differ between its rows (the rest go to its legend), so
// two different points never print alike and a new axis is a column with no change here.
#pragma once

#include <string>
#include <vector>

#include "attnprof/axes.hpp"
#include "attnprof/result.hpp"

namespace attnprof {

// Every axis with a JSON field, in the table's order.
std::vector<const Axis*> spec_axes();
// The spec's value on one axis as a table cell: the axis's canonical text (what the journal
// holds), booleans as true / false.
std::string spec_cell(const Axis& axis, const Spec& spec);
// Of spec_axes(), those whose cells differ between `rows`, and those that do not.
struct SpecAxesSplit {
  std::vector<const Axis*> varying, fixed;
};
SpecAxesSplit split_spec_axes(const std::vector<Result>& rows);

}  // namespace attnprof
