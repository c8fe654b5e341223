// The comparison as text: compared rows, a summary, what changed status and what did not match.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "attnprof/compare.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

std::string percent_change(double ratio) {
  const double pct = (ratio - 1) * 100;
  return fmt::format("{}{}%", pct >= 0 ? "+" : "", format_sig3(pct));
}

bool noisy(const ComparedRow& r) {
  return r.base.timing.noisy || r.head.timing.noisy;
}

Table compared_table(const Comparison& c) {
  Table t;
  t.header = {"provider", "shape",  "timing", "A median", "B median",
              "B/A",      "change", "noise",  "verdict"};
  t.right = {false, false, false, true, true, true, true, true, false};
  for (const ComparedRow& r : c.rows) {
    // A noisy side's median carries "~", as in the run's own table, and so does the verdict.
    const auto median = [](const Result& x) {
      return fmt::format("{}{}", x.timing.noisy ? "~" : "", format_duration_us(x.timing.median_us));
    };
    t.add({r.base.provider, r.base.spec.label(), r.base.timing.mode, median(r.base), median(r.head),
           format_sig3(r.ratio), percent_change(r.ratio),
           std::isfinite(r.band) ? "±" + format_sig3(std::expm1(r.band) * 100) + "%" : "unknown",
           std::string(to_string(r.verdict)) + (noisy(r) ? " ~" : "")});
  }
  return t;
}

// At most `limit` items, then "... and N more".
std::string listing(const std::vector<std::string>& items, std::size_t limit = 8) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < limit; ++i) out += "  " + items[i] + '\n';
  if (items.size() > limit) out += fmt::format("  ... and {} more\n", items.size() - limit);
  return out;
}

}  // namespace

std::string format_comparison(const Comparison& c, const std::string& base_label,
                              const std::string& head_label, const CompareOptions& options) {
  std::string out = fmt::format("A: {}\nB: {}\n", base_label, head_label);
  if (!c.env_differences.empty()) {
    out += "environments differ:\n" + listing(c.env_differences, 16);
  }
  out += '\n';
  if (!c.rows.empty()) out += render_plain(compared_table(c)) + '\n';

  out += fmt::format("{} points compared: {} FASTER, {} SLOWER, {} SAME, {} AMBIGUOUS",
                     c.rows.size(), c.count(Verdict::faster), c.count(Verdict::slower),
                     c.count(Verdict::same), c.count(Verdict::ambiguous));
  if (!c.rows.empty()) out += fmt::format("; geomean B/A {}", format_sig3(c.geomean_ratio()));
  out += fmt::format(
      " (threshold {}%; a change counts when it exceeds {} standard errors of both medians)\n",
      format_sig3(options.threshold * 100), format_sig3(options.z));
  const auto noisy_rows = std::count_if(c.rows.begin(), c.rows.end(), noisy);
  if (noisy_rows > 0) {
    out += fmt::format(
        "~ {} of these points have a noisy side (sampling stopped at its limit with too few "
        "samples or the noise above the bound; the journal's stop_reason says which): their "
        "verdicts are only as sure as that noise\n",
        noisy_rows);
  }

  std::vector<std::string> clock_shifts;
  for (const ComparedRow& r : c.rows) {
    if (r.clock_ratio > 0 && std::fabs(r.clock_ratio - 1) >= kClockShiftNoted) {
      clock_shifts.push_back(fmt::format(
          "{} {}: B/A {} with the SM clock at {} -> {} MHz ({})", r.base.provider,
          r.base.spec.label(), format_sig3(r.ratio), format_sig3(r.base.timing.clock_mhz),
          format_sig3(r.head.timing.clock_mhz), percent_change(r.clock_ratio)));
    }
  }
  if (!clock_shifts.empty()) {
    out += fmt::format(
        "{} points ran at SM clocks {}% or more apart (compute-bound kernels follow the clock, "
        "memory-bound ones do not):\n",
        clock_shifts.size(), format_sig3(kClockShiftNoted * 100));
    out += listing(clock_shifts);
  }

  std::vector<std::string> lines;
  for (const StatusChange& s : c.changes) {
    // A passed point that is no longer passed (and did not break) is listed under `missing`.
    if (s.base_status == "passed" && !s.regression) continue;
    lines.push_back(fmt::format("{}{} {}: {} -> {}{}", s.regression ? "REGRESSION " : "",
                                s.provider, s.spec.label(), s.base_status, s.head_status,
                                s.reason.empty() ? "" : " (" + one_line(s.reason) + ")"));
  }
  if (!lines.empty()) {
    out += fmt::format("{} points changed status:\n", lines.size()) + listing(lines, 32);
  }
  if (!c.missing.empty()) {
    out += fmt::format("{} points passed in A and have no passed row in B:\n", c.missing.size()) +
           listing(c.missing, 32);
  }
  if (!c.mode_mismatches.empty()) {
    out += fmt::format("{} points not compared, timed in different modes:\n",
                       c.mode_mismatches.size()) +
           listing(c.mode_mismatches);
  }
  if (!c.only_base.empty()) {
    out += fmt::format("{} points only in A:\n", c.only_base.size()) + listing(c.only_base);
  }
  if (!c.only_head.empty()) {
    out += fmt::format("{} points only in B:\n", c.only_head.size()) + listing(c.only_head);
  }
  if (c.duplicates > 0) {
    out += fmt::format("{} rows were repeated within a run; the last of each was used\n",
                       c.duplicates);
  }
  return out;
}

}  // namespace attnprof
