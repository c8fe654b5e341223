// The report's tables: fastest provider per shape, precision against speed, memory growth, what was
// not supported, what did not pass, and every row.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "attnprof/model.hpp"
#include "report/measured.hpp"
#include "report/precision.hpp"
#include "report/report_model.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

TableSection fastest_table(const std::vector<Result>& rows, const std::string& baseline) {
  TableSection s;
  s.heading = "Fastest provider per shape";
  s.table.header = {"shape",    "timing",
                    "fastest",  "median",
                    "TFLOP/s",  fmt::format("vs {}", baseline.empty() ? "baseline" : baseline),
                    "runner-up"};
  s.table.right = {false, false, false, true, true, true, false};
  for (const Fastest& f : fastest_per_shape(rows, baseline)) {
    const Result& b = *f.best;
    std::string vs = "-";
    if (f.best->provider == baseline) {
      vs = "baseline";
    } else if (f.baseline) {
      vs = format_times(f.baseline->timing.median_us / b.timing.median_us);
    }
    std::string runner = "-";
    if (f.runner_up) {
      const bool tie = !f.tied.empty() && f.tied.front() == f.runner_up;
      runner =
          fmt::format("{} ({} slower{})", f.runner_up->provider,
                      format_times(f.runner_up->timing.median_us / b.timing.median_us),
                      tie ? fmt::format("; a {}-way tie within noise", f.tied.size() + 1) : "");
    }
    s.table.add({b.spec.label(), b.timing.mode, b.provider, format_duration_us(b.timing.median_us),
                 format_sig3(b.tflops), vs, runner});
  }
  return s;
}

TableSection memory_table(const std::vector<Result>& rows) {
  TableSection s;
  s.heading = "Memory growth";
  s.intro =
      "Extra memory (peak minus inputs and outputs) against N over each fixed-batch series with "
      "at least 3 lengths, fitted as a constant plus a power of N (least squares on relative "
      "residuals): the constant is what does not grow (a library's workspace), the power what "
      "does (the scores).";
  s.table.header = {"provider", "series", "N", "points", "extra memory ∝", "R²"};
  s.table.right = {false, false, true, true, true, true};
  for (const MemoryGrowth& m : memory_growth(group_series(rows))) {
    const std::string n = fmt::format("{}–{}", m.n_min, m.n_max);
    if (m.no_extra) {
      s.table.add({m.provider, m.series, n, std::to_string(m.points), "none", "-"});
    } else if (m.fit) {
      s.table.add({m.provider, m.series, n, std::to_string(m.points),
                   describe_growth(*m.fit, m.y_min), fmt::format("{:.3f}", m.fit->r2)});
    }
  }
  return s;
}

// A reason with its numbers blanked: the same refusal at other sizes ("Query.sizes(): [1, 12,
// 64, 64]") is one reason.
std::string without_numbers(const std::string& reason) {
  std::string out;
  for (char c : reason) {
    const bool digit = c >= '0' && c <= '9';
    if (!digit) {
      out += c;
    } else if (out.empty() || out.back() != '#') {
      out += '#';
    }
  }
  return out;
}

// Not supported: per provider and reason (numbers aside), shown by its first example, with the
// points; the only place the report counts them.
TableSection unsupported_table(const std::vector<Result>& rows) {
  TableSection s;
  s.heading = "Not supported";
  s.table.header = {"provider", "reason (the first of its kind)", "points"};
  s.table.right = {false, false, true};
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, int64_t> count;
  std::map<std::pair<std::string, std::string>, std::string> example;
  for (const Result& r : rows) {
    if (r.status != Status::not_supported) continue;
    const std::string reason = one_line(r.reason);
    const auto key = std::make_pair(r.provider, without_numbers(reason));
    if (count[key]++ == 0) {
      order.push_back(key);
      example[key] = reason;
    }
  }
  for (const auto& key : order) s.table.add({key.first, example[key], std::to_string(count[key])});
  return s;
}

TableSection broken_table(const std::vector<Result>& rows) {
  TableSection s;
  s.heading = "Did not pass";
  s.table.header = {"provider", "shape", "status", "reason"};
  for (const Result& r : rows) {
    if (r.status == Status::passed || r.status == Status::not_supported) continue;
    s.table.add({r.provider, r.spec.label(), std::string(to_string(r.status)), one_line(r.reason)});
  }
  return s;
}

std::string percent(const std::optional<double>& v) {
  return v ? format_sig3(*v) + "%" : "-";
}

TableSection all_rows_table(const std::vector<Result>& rows) {
  const bool peaks = std::any_of(rows.begin(), rows.end(), [](const Result& r) {
    return r.pct_peak_flops.has_value() || r.pct_peak_bw.has_value();
  });
  // The ceiling scaled to each row's clock and the datasheet's, beside the measured one, where the
  // rows have them (ceilings measured with their clock, a known device).
  const bool clocked = std::any_of(rows.begin(), rows.end(), [](const Result& r) {
    return r.pct_peak_flops_at_clock.has_value() || r.pct_datasheet_flops.has_value();
  });
  TableSection s;
  s.heading = "All results";
  Table& t = s.table;
  t.header = {"provider", "shape", "status", "median", "p95", "TFLOP/s", "GB/s"};
  if (peaks) t.header.insert(t.header.end(), {"% peak FLOP/s", "% peak BW"});
  if (clocked) t.header.insert(t.header.end(), {"% peak at clock", "% datasheet"});
  t.header.insert(t.header.end(), {"peak memory", "extra memory", "rel. err", "note"});
  t.right.assign(t.header.size(), true);
  t.right[0] = t.right[1] = t.right[2] = t.right.back() = false;
  for (const Result& r : rows) {
    const bool timed = has_timing(r);
    std::vector<std::string> c = {r.provider,
                                  r.spec.label(),
                                  std::string(to_string(r.status)),
                                  timed ? fmt::format("{}{}", r.timing.noisy ? "~" : "",
                                                      format_duration_us(r.timing.median_us))
                                        : "-",
                                  timed ? format_duration_us(r.timing.p95_us) : "-",
                                  timed ? format_sig3(r.tflops) : "-",
                                  timed ? format_sig3(r.gbps) : "-"};
    if (peaks) c.insert(c.end(), {percent(r.pct_peak_flops), percent(r.pct_peak_bw)});
    if (clocked) {
      c.insert(c.end(), {percent(r.pct_peak_flops_at_clock), percent(r.pct_datasheet_flops)});
    }
    c.insert(c.end(), {has_memory(r) ? format_bytes(double(r.memory.peak_bytes)) : "-",
                       has_memory(r) ? format_bytes(double(r.memory.extra_bytes)) : "-",
                       has_verify(r) ? format_error(r.verify.rel_l2_err) : "-",
                       r.status == Status::passed ? "" : one_line(r.reason)});
    t.add(std::move(c));
  }
  s.notes = {
      "median and p95 per launch; ~ marks a noisy median (sampling stopped above the noise bound)",
      "TFLOP/s = FLOPs / median; GB/s = minimum bytes / median (" + std::string(kByteConvention) +
          ")",
      "extra memory = peak memory - inputs - outputs; rel. err = worst relative L2 error of the "
      "checked rows against fp64"};
  if (clocked) {
    s.notes.push_back(
        "% peak at clock = TFLOP/s against the measured ceiling scaled to the row's own SM clock; "
        "% datasheet = against the vendor's dense rate (docs/method.md, \"% of peak\")");
  }
  return s;
}

}  // namespace

std::vector<TableSection> report_tables(const std::vector<Result>& rows,
                                        const std::string& baseline) {
  std::vector<TableSection> out;
  for (TableSection s : {fastest_table(rows, baseline), precision_table(rows), memory_table(rows),
                         unsupported_table(rows), broken_table(rows), all_rows_table(rows)}) {
    if (!s.table.rows.empty()) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace attnprof
