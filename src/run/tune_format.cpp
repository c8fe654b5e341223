// The tuner's output: the summary table, each provider's measured curve and the JSON summary.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attnprof/tune.hpp"
#include "report/measured.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

using OrderedJson = nlohmann::ordered_json;

// The spec's label without the axis being tuned ("B1" for batch, "N..." for the sequence).
std::string shape_label(const Spec& spec, TuneAxis axis) {
  std::istringstream words(spec.label());
  std::string word, out;
  while (words >> word) {
    const bool tuned = axis == TuneAxis::batch ? word.starts_with("B") : word.starts_with("N");
    if (!tuned) out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

std::string value_or_dash(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : "-";
}

// A duration as the run's console shows it: "~" before a noisy row's figure.
std::string timed(const Result& r, double us) {
  return fmt::format("{}{}", r.timing.noisy ? "~" : "", format_duration_us(us));
}

OrderedJson point_json(const TunePoint& p) {
  const Result& r = p.result;
  return {{"value", p.value},
          {"status", to_string(r.status)},
          {"fits", p.fits},
          {"why_not", p.why_not},
          {"median_us", r.timing.median_us},
          {"p95_us", r.timing.p95_us},
          {"samples", r.timing.samples},
          {"noisy", r.timing.noisy},
          {"peak_bytes", r.memory.peak_bytes},
          {"tokens_per_s", r.tokens_per_s}};
}

}  // namespace

std::string format_tune_summary(const std::vector<TuneResult>& results, TuneAxis axis) {
  Table t;
  const bool batch = axis == TuneAxis::batch;
  if (batch) {
    t.header = {"provider",
                "shape",
                "max batch",
                "optimal batch",
                "tokens/s at optimum",
                "p95 at optimum (samples)",
                "peak memory at optimum",
                "points",
                "limited by"};
  } else {
    t.header = {"provider",   "shape",       "max seq", "median at max",
                "p95 at max", "peak memory", "points",  "limited by"};
  }
  t.right = {false, false, true, true, true, true, true, true, false};
  if (!batch) t.right = {false, false, true, true, true, true, true, false};
  for (const TuneResult& r : results) {
    const std::string shape = shape_label(r.spec, axis);
    if (!r.largest) {
      std::vector<std::string> row(t.header.size(), "-");
      row[0] = r.provider;
      row[1] = shape;
      row[row.size() - 2] = std::to_string(r.curve.size());
      row.back() = (batch ? "no batch fits: " : "no length fits: ") + r.boundary;
      t.add(std::move(row));
      continue;
    }
    const TunePoint* at = r.at(batch ? *r.optimal : *r.largest);
    const Result& m = at->result;
    const std::string memory = has_memory(m) ? format_bytes(double(m.memory.peak_bytes)) : "-";
    const std::string points = std::to_string(r.curve.size());
    if (batch) {
      t.add({r.provider, shape, std::to_string(*r.largest), value_or_dash(r.optimal),
             format_rate(m.tokens_per_s),
             fmt::format("{} ({})", timed(m, m.timing.p95_us), m.timing.samples), memory, points,
             r.boundary});
    } else {
      t.add({r.provider, shape, std::to_string(*r.largest), timed(m, m.timing.median_us),
             timed(m, m.timing.p95_us), memory, points, r.boundary});
    }
  }
  std::string out = render_plain(t);
  const auto noisy = [](const TuneResult& r) {
    for (const TunePoint& p : r.curve)
      if (has_timing(p.result) && p.result.timing.noisy) return true;
    return false;
  };
  if (std::any_of(results.begin(), results.end(), noisy)) {
    out +=
        "~ marks a noisy figure: sampling stopped at its limit with too few samples or the "
        "noise above the bound (each point's stop reason is in --out's rows); a boundary "
        "between noisy points is only as sure as they are\n";
  }
  return out;
}

std::string format_tune_point(const TunePoint& p, TuneAxis axis) {
  const Result& r = p.result;
  return fmt::format("{} {} {}: {}{}{}", r.provider, axis == TuneAxis::batch ? "batch" : "seq",
                     p.value, to_string(r.status),
                     has_timing(r)
                         ? fmt::format(", median {}, p95 {}{}", timed(r, r.timing.median_us),
                                       timed(r, r.timing.p95_us), r.timing.noisy ? " (noisy)" : "")
                         : "",
                     has_memory(r) ? ", peak " + format_bytes(double(r.memory.peak_bytes)) : "") +
         (p.fits ? " - fits" : " - does not fit: " + p.why_not);
}

std::string format_tune_curve(const TuneResult& result) {
  Table t;
  t.header = {result.axis == TuneAxis::batch ? "batch" : "seq",
              "status",
              "median",
              "p95",
              "peak memory",
              "tokens/s",
              "fits",
              "why not"};
  t.right = {true, false, true, true, true, true, false, false};
  for (const TunePoint& p : result.curve) {
    const Result& r = p.result;
    const bool has_time = has_timing(r);
    std::string mark = p.fits ? "yes" : "no";
    if (result.optimal && p.value == *result.optimal) mark += " (optimal)";
    t.add({std::to_string(p.value), std::string(to_string(r.status)),
           has_time ? timed(r, r.timing.median_us) : "-",
           has_time ? timed(r, r.timing.p95_us) : "-",
           has_memory(r) ? format_bytes(double(r.memory.peak_bytes)) : "-",
           has_time ? format_rate(r.tokens_per_s) : "-", mark, p.why_not});
  }
  return fmt::format("{} {}:\n", result.provider, shape_label(result.spec, result.axis)) +
         render_plain(t);
}

std::string tune_summary_json(const std::vector<TuneResult>& results, const TuneLimits& limits,
                              const std::string& stopped_by) {
  OrderedJson doc;
  doc["stopped_by"] = stopped_by.empty() ? OrderedJson(nullptr) : OrderedJson(stopped_by);
  doc["limits"] = {
      {"max_memory_bytes",
       limits.max_memory_bytes ? OrderedJson(*limits.max_memory_bytes) : OrderedJson(nullptr)},
      {"max_p95_us", limits.max_p95_us ? OrderedJson(*limits.max_p95_us) : OrderedJson(nullptr)}};
  doc["results"] = OrderedJson::array();
  for (const TuneResult& r : results) {
    OrderedJson j;
    j["provider"] = r.provider;
    j["axis"] = r.axis == TuneAxis::batch ? "batch" : "seq";
    j["spec"] = r.spec.key();
    j["shape"] = r.spec.label();
    j["largest"] = r.largest ? OrderedJson(*r.largest) : OrderedJson(nullptr);
    j["optimal"] = r.optimal ? OrderedJson(*r.optimal) : OrderedJson(nullptr);
    j["fits"] = r.largest.has_value();
    j["complete"] = !r.stopped;
    j["boundary"] = r.boundary;
    j["curve"] = OrderedJson::array();
    for (const TunePoint& p : r.curve) j["curve"].push_back(point_json(p));
    doc["results"].push_back(std::move(j));
  }
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + '\n';
}

}  // namespace attnprof
