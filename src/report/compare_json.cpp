// The comparison as one JSON document (`attnprof compare --json`, attnprof.compare in Python):
// the same verdicts as the text, in fields.
#include <cmath>
#include <nlohmann/json.hpp>

#include "attnprof/compare.hpp"
#include "attnprof/result_json.hpp"

namespace attnprof {

namespace {

using OrderedJson = nlohmann::ordered_json;

// A number JSON can hold: NaN and the infinities (an unknown noise band) become null.
OrderedJson finite_or_null(double v) {
  return std::isfinite(v) ? OrderedJson(v) : OrderedJson(nullptr);
}

OrderedJson compared_json(const ComparedRow& r) {
  return {{"provider", r.base.provider},
          {"shape", r.base.spec.label()},
          {"spec", to_json(r.base.spec)},
          {"timing_mode", r.base.timing.mode},
          {"base_median_us", r.base.timing.median_us},
          {"new_median_us", r.head.timing.median_us},
          {"ratio", r.ratio},
          // The change that stands out of both runs' noise, as a share (0.03: 3%).
          {"noise", finite_or_null(std::expm1(r.band))},
          {"verdict", std::string(to_string(r.verdict))},
          {"clock_ratio", r.clock_ratio > 0 ? OrderedJson(r.clock_ratio) : OrderedJson(nullptr)}};
}

OrderedJson change_json(const StatusChange& s) {
  return {{"provider", s.provider},       {"shape", s.spec.label()},     {"spec", to_json(s.spec)},
          {"base_status", s.base_status}, {"new_status", s.head_status}, {"reason", s.reason},
          {"regression", s.regression}};
}

}  // namespace

std::string comparison_json(const Comparison& c, const std::string& base_label,
                            const std::string& head_label, const CompareOptions& options) {
  OrderedJson doc;
  doc["base"] = base_label;
  doc["new"] = head_label;
  doc["threshold"] = options.threshold;
  doc["z"] = options.z;
  doc["summary"] = {
      {"compared", c.rows.size()},
      {"faster", c.count(Verdict::faster)},
      {"slower", c.count(Verdict::slower)},
      {"same", c.count(Verdict::same)},
      {"ambiguous", c.count(Verdict::ambiguous)},
      {"geomean_ratio", c.rows.empty() ? OrderedJson(nullptr) : OrderedJson(c.geomean_ratio())},
      {"broken", c.broken()},
      {"missing", c.missing.size()},
      // What --fail-on-regression fails on (without --allow-missing).
      {"regression", c.has_regression(false)}};
  doc["rows"] = OrderedJson::array();
  for (const ComparedRow& r : c.rows) doc["rows"].push_back(compared_json(r));
  doc["changes"] = OrderedJson::array();
  for (const StatusChange& s : c.changes) doc["changes"].push_back(change_json(s));
  doc["missing"] = c.missing;
  doc["mode_mismatches"] = c.mode_mismatches;
  doc["only_base"] = c.only_base;
  doc["only_new"] = c.only_head;
  doc["env_differences"] = c.env_differences;
  doc["duplicates"] = c.duplicates;
  return doc.dump(2) + '\n';
}

}  // namespace attnprof
