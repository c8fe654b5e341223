// `attnprof report --tune`: the answers of a `tune --json` file read back, as a finding per
// provider and a table, "which batch to deploy" beside the sweep's answers.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attnprof/report.hpp"
#include "report/report_model.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

std::optional<int64_t> optional_int(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<int64_t>();
}

}  // namespace

std::string tune_limits(const TuneSummary& t) {
  std::vector<std::string> parts;
  if (t.max_memory_bytes) {
    parts.push_back(format_bytes(double(*t.max_memory_bytes)) + " of peak memory");
  }
  if (t.max_p95_us) parts.push_back("a p95 of " + format_duration_us(*t.max_p95_us));
  return parts.empty() ? "no limit but running out of memory"
                       : fmt::format("{}", fmt::join(parts, " and "));
}

TuneSummary read_tune_summary(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("--tune: cannot read {}", path.string()));
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    TuneSummary t;
    if (doc.contains("stopped_by") && doc.at("stopped_by").is_string())
      t.stopped_by = doc.at("stopped_by").get<std::string>();
    const nlohmann::json& limits = doc.at("limits");
    t.max_memory_bytes = optional_int(limits, "max_memory_bytes");
    if (!limits.at("max_p95_us").is_null()) t.max_p95_us = limits.at("max_p95_us").get<double>();
    for (const nlohmann::json& r : doc.at("results")) {
      TuneAnswer a;
      a.provider = r.at("provider").get<std::string>();
      a.shape = r.value("shape", r.at("spec").get<std::string>());
      a.axis = r.at("axis").get<std::string>();
      a.boundary = r.at("boundary").get<std::string>();
      a.largest = optional_int(r, "largest");
      a.optimal = optional_int(r, "optimal");
      a.complete = r.value("complete", true);
      a.points = static_cast<int64_t>(r.at("curve").size());
      const std::optional<int64_t> at = a.axis == "batch" ? a.optimal : a.largest;
      for (const nlohmann::json& p : r.at("curve")) {
        if (!at || p.at("value").get<int64_t>() != *at) continue;
        a.tokens_per_s = p.at("tokens_per_s").get<double>();
        a.p95_us = p.at("p95_us").get<double>();
        a.samples = p.value("samples", int64_t{0});
        a.peak_bytes = p.at("peak_bytes").get<int64_t>();
        a.noisy = p.value("noisy", false);
      }
      t.answers.push_back(std::move(a));
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(
        fmt::format("--tune: {} is not a `tune --json` file ({})", path.string(), e.what()));
  }
}

std::vector<Finding> tune_findings(const TuneSummary& t) {
  std::vector<Finding> out;
  for (const TuneAnswer& a : t.answers) {
    const bool batch = a.axis == "batch";
    std::string text;
    if (!a.largest) {
      text = fmt::format("Deploy: `{}` fits no {} under {} at {} ({}).", a.provider, a.axis,
                         tune_limits(t), a.shape, a.boundary);
    } else if (batch) {
      text = fmt::format(
          "Deploy: `{}` fits up to batch {} under {} at {}; the most tokens/s, {}, at batch {} "
          "(p95 {} from {} samples, peak memory {}; {} batches measured; above: {}).",
          a.provider, *a.largest, tune_limits(t), a.shape, format_rate(a.tokens_per_s),
          a.optimal ? *a.optimal : *a.largest, format_duration_us(a.p95_us), a.samples,
          format_bytes(double(a.peak_bytes)), a.points, a.boundary);
    } else {
      text = fmt::format(
          "Longest sequence: `{}` runs up to {} under {} at {} (p95 {} from {} samples, peak "
          "memory {}; above: {}).",
          a.provider, *a.largest, tune_limits(t), a.shape, format_duration_us(a.p95_us), a.samples,
          format_bytes(double(a.peak_bytes)), a.boundary);
    }
    if (a.noisy) text += " Its figures are from a noisy point (sampling stopped at its limit).";
    if (!a.complete) {
      text += fmt::format(" Not final: {} stopped the search before it ended.",
                          t.stopped_by.empty() ? std::string("a signal") : t.stopped_by);
    }
    out.push_back({"tune", text, a.provider});
  }
  return out;
}

TableSection tune_table(const TuneSummary& t) {
  TableSection s;
  s.heading = "Batch to deploy (attnprof tune)";
  s.intro = fmt::format(
      "The largest batch and the one with the most tokens/s under {}, every value a measured and "
      "verified point.",
      tune_limits(t));
  s.table.header = {"provider",      "shape",       "max",    "optimal",   "tokens/s",
                    "p95 (samples)", "peak memory", "points", "limited by"};
  s.table.right = {false, false, true, true, true, true, true, true, false};
  for (const TuneAnswer& a : t.answers) {
    const bool fits = a.largest.has_value();
    s.table.add(
        {a.provider, a.shape, fits ? std::to_string(*a.largest) : "-",
         a.optimal ? std::to_string(*a.optimal) : "-", fits ? format_sig3(a.tokens_per_s) : "-",
         fits ? fmt::format("{} ({})", format_duration_us(a.p95_us), a.samples) : "-",
         fits ? format_bytes(double(a.peak_bytes)) : "-", std::to_string(a.points), a.boundary});
  }
  return s;
}

}  // namespace attnprof
