// Precision against speed (precision.hpp): rows grouped by provider, shape and timing mode with
// the dtype left out, then the table and the findings.
#include "report/precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/measured.hpp"
#include "report/series.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

// Widest first: the order rows of a group are shown in.
int dtype_rank(DType t) {
  switch (t) {
    case DType::fp32:
      return 0;
    case DType::fp16:
      return 1;
    case DType::bf16:
      return 2;
    case DType::fp8_e4m3:
      return 3;
    case DType::fp8_e5m2:
      return 4;
  }
  return 5;
}

// The spec's label without its dtype: "B1 H64/8 N16384 D128 causal fwd".
std::string shape_label(const Spec& s) {
  const std::string label = s.label();
  const std::string dtype = fmt::format(" {} ", to_string(s.dtype));
  const auto at = label.find(dtype);
  if (at == std::string::npos) return label;
  return label.substr(0, at + 1) + label.substr(at + dtype.size());
}

const Result* reference_of(const std::vector<const Result*>& rows) {
  for (DType t : {DType::bf16, DType::fp16, DType::fp32}) {
    for (const Result* r : rows)
      if (r->spec.dtype == t) return r;
  }
  return rows.front();
}

}  // namespace

std::vector<PrecisionGroup> precision_groups(const std::vector<Result>& rows) {
  std::vector<std::string> order;
  std::map<std::string, PrecisionGroup> groups;
  for (const Result& r : rows) {
    if (!passed_and_timed(r) || !has_verify(r)) continue;
    Spec any = r.spec;
    any.dtype = DType::fp32;
    const std::string key = r.provider + "|" + r.timing.mode + "|" + any.key();
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) {
      order.push_back(key);
      it->second.provider = r.provider;
      it->second.shape = shape_label(r.spec);
    }
    it->second.rows.push_back(&r);
  }
  std::vector<PrecisionGroup> out;
  for (const std::string& key : order) {
    PrecisionGroup& g = groups.at(key);
    std::stable_sort(g.rows.begin(), g.rows.end(), [](const Result* a, const Result* b) {
      return dtype_rank(a->spec.dtype) < dtype_rank(b->spec.dtype);
    });
    // One row per dtype (a rerun of the same point keeps its first row).
    g.rows.erase(std::unique(g.rows.begin(), g.rows.end(),
                             [](const Result* a, const Result* b) {
                               return a->spec.dtype == b->spec.dtype;
                             }),
                 g.rows.end());
    if (g.rows.size() < 2) continue;
    g.reference = reference_of(g.rows);
    out.push_back(std::move(g));
  }
  return out;
}

TableSection precision_table(const std::vector<Result>& rows) {
  TableSection s;
  s.heading = "Precision against speed";
  s.intro =
      "One provider at one shape in each dtype it ran: its time against the group's bf16 (else "
      "fp16, else fp32) row, and the worst checked row's relative L2 error against fp64 with the "
      "bound it passed.";
  s.table.header = {"provider", "shape", "dtype",    "median",
                    "TFLOP/s",  "speed", "rel. err", "bound"};
  s.table.right = {false, false, false, true, true, true, true, true};
  for (const PrecisionGroup& g : precision_groups(rows)) {
    for (const Result* r : g.rows) {
      const std::string speed =
          r == g.reference
              ? "reference"
              : fmt::format("{} {}",
                            format_times(g.reference->timing.median_us / r->timing.median_us),
                            to_string(g.reference->spec.dtype));
      s.table.add({g.provider, g.shape, std::string(to_string(r->spec.dtype)),
                   format_duration_us(r->timing.median_us), format_sig3(r->tflops), speed,
                   format_error(r->verify.rel_l2_err), format_error(r->verify.tolerance)});
    }
  }
  s.notes = {"speed = the reference row's median / this row's (above 1×: faster)",
             "fp8 inputs are generated in fp32, scaled and rounded to the format; the fp64 "
             "reference computes from the values the fp8 codes hold (docs/method.md)"};
  return s;
}

void add_precision_findings(const std::vector<Result>& rows, std::vector<Finding>& out) {
  std::map<std::string, std::pair<const PrecisionGroup*, const Result*>> largest;  // by provider
  std::vector<std::string> order;
  const std::vector<PrecisionGroup> groups = precision_groups(rows);
  for (const PrecisionGroup& g : groups) {
    if (!is_fp8(g.reference->spec.dtype)) {
      for (const Result* r : g.rows) {
        if (r->spec.dtype != DType::fp8_e4m3 && r->spec.dtype != DType::fp8_e5m2) continue;
        auto [it, fresh] = largest.try_emplace(g.provider, &g, r);
        if (fresh) order.push_back(g.provider);
        // The e4m3 row of the largest shape (e5m2 only where e4m3 did not run).
        const Result* best = it->second.second;
        if (r->flops > best->flops || (r->flops == best->flops && r->spec.dtype == DType::fp8_e4m3))
          it->second = {&g, r};
      }
    }
  }
  for (const std::string& p : order) {
    const auto [g, r] = largest.at(p);
    const Result* ref = g->reference;
    const double speed = ref->timing.median_us / r->timing.median_us;
    out.push_back(
        {"precision",
         fmt::format("Precision against speed: {} in {} runs {} in {}, {} in {} ({} against {} "
                     "TFLOP/s); its worst row is {} off fp64 against {} in {} (bounds {} and {}).",
                     code(p), to_string(r->spec.dtype), g->shape,
                     format_duration_us(r->timing.median_us),
                     speed >= 1 ? format_times(speed) + " faster than"
                                : format_times(1 / speed) + " slower than",
                     to_string(ref->spec.dtype), format_sig3(r->tflops), format_sig3(ref->tflops),
                     format_error(r->verify.rel_l2_err), format_error(ref->verify.rel_l2_err),
                     to_string(ref->spec.dtype), format_error(r->verify.tolerance),
                     format_error(ref->verify.tolerance)),
         p});
  }
}

FigureGroup precision_figures(const std::vector<Result>& rows,
                              const std::vector<std::string>& providers, int& next_id) {
  FigureGroup group;
  group.title = "Precision against speed";
  // The groups by shape (their label and timing mode), largest first.
  std::map<std::string, std::vector<const PrecisionGroup*>> by_shape;
  std::vector<std::pair<double, std::string>> order;
  const std::vector<PrecisionGroup> groups = precision_groups(rows);
  for (const PrecisionGroup& g : groups) {
    const std::string key = g.reference->timing.mode + "|" + g.shape;
    if (!by_shape.contains(key)) order.emplace_back(g.reference->flops, key);
    by_shape[key].push_back(&g);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (order.size() > kPrecisionFigures) order.resize(kPrecisionFigures);
  for (const auto& [flops, key] : order) {
    const std::string shape = by_shape[key].front()->shape;
    PlotSpec plot;
    plot.title = "Precision against speed: " + shape;
    plot.x_label = "worst row's relative L2 error against fp64";
    plot.y_label = "TFLOP/s";
    plot.width = 960;
    plot.height = 520;
    plot.key_right = true;
    for (const PrecisionGroup* g : by_shape[key]) {
      const auto at = std::find(providers.begin(), providers.end(), g->provider);
      const int color = static_cast<int>(at - providers.begin());
      for (const Result* r : g->rows) {
        PlotSeries s;
        s.name = fmt::format("{} {}", g->provider, to_string(r->spec.dtype));
        s.style = PlotStyle::points;
        s.color = color * 5 + dtype_rank(r->spec.dtype);
        s.points = {{r->verify.rel_l2_err, r->tflops}};
        plot.series.push_back(std::move(s));
      }
    }
    group.figures.push_back(
        {fmt::format("fig{:02}-precision", next_id++),
         fmt::format("TFLOP/s against the worst row's error per provider and dtype, {}", shape),
         std::move(plot)});
  }
  return group;
}

}  // namespace attnprof
