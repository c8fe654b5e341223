// Precision against speed: one provider at one shape in several dtypes (fp8 against bf16, fp16
// and fp32), each with its time, TFLOP/s and worst row error against fp64 — the seeds' question
// "what does quantization cost and buy?" answered with numbers.
#pragma once

#include <string>
#include <vector>

#include "attnprof/result.hpp"
#include "report/findings.hpp"
#include "report/report_model.hpp"

namespace attnprof {

// A provider's passed, timed rows of one shape and timing mode that differ only in dtype (at least
// two), in the order fp32, fp16, bf16, fp8_e4m3, fp8_e5m2. `reference` is the row the others are
// held against: bf16, else fp16, else fp32, else the first.
struct PrecisionGroup {
  std::string provider;
  std::string shape;  // the label without its dtype
  std::vector<const Result*> rows;
  const Result* reference = nullptr;
};
std::vector<PrecisionGroup> precision_groups(const std::vector<Result>& rows);

// The table: every row of every group, its speed against the group's reference and its error.
TableSection precision_table(const std::vector<Result>& rows);
// Per provider with fp8 rows and a reference: the largest such shape, in one sentence.
void add_precision_findings(const std::vector<Result>& rows, std::vector<Finding>& out);

// The figures: per shape that some provider ran in two dtypes or more (the kPrecisionFigures
// largest by FLOPs), TFLOP/s against the worst row's error, a point per provider and dtype.
inline constexpr std::size_t kPrecisionFigures = 6;
FigureGroup precision_figures(const std::vector<Result>& rows,
                              const std::vector<std::string>& providers, int& next_id);

}  // namespace attnprof
