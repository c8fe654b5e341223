// The headline findings (headline.hpp), each built from the answer table, the rows, or the tune's
// answers.
#include "report/headline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "report/report_model.hpp"
#include "report/series.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

// Providers in order of first appearance with a count each.
struct Tally {
  std::vector<std::string> order;
  std::map<std::string, int64_t> count;
  void add(const std::string& key) {
    if (count[key]++ == 0) order.push_back(key);
  }
  // The keys, most counted first (the first seen among equals).
  std::vector<std::string> ranked() const {
    std::vector<std::string> out = order;
    std::stable_sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
      return count.at(a) > count.at(b);
    });
    return out;
  }
};

// The provider that leads each kind of class (most classes fastest), in the order of kinds.
struct Leader {
  ShapeKind kind = ShapeKind::prefill;
  std::string provider;
  int64_t won = 0, classes = 0, tied = 0;
  std::vector<std::pair<std::string, int64_t>> others;  // the other fastest providers
};
std::vector<Leader> leaders(const std::vector<ClassAnswer>& answers) {
  std::map<ShapeKind, Tally> wins;
  std::map<ShapeKind, std::map<std::string, int64_t>> ties;
  for (const ClassAnswer& a : answers) {
    wins[a.shape_class.kind].add(a.fastest);
    if (!a.tied().empty()) ++ties[a.shape_class.kind][a.fastest];
  }
  std::vector<Leader> out;
  for (const auto& [kind, tally] : wins) {
    const std::vector<std::string> ranked = tally.ranked();
    Leader l{kind, ranked.front(), tally.count.at(ranked.front()), 0, ties[kind][ranked.front()],
             {}};
    for (const std::string& p : ranked) {
      l.classes += tally.count.at(p);
      if (p != l.provider) l.others.emplace_back(p, tally.count.at(p));
    }
    out.push_back(std::move(l));
  }
  return out;
}

// "1 class", "4 classes"; "1 provider", "11 providers".
std::string count_of(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "Deploy `cudnn.sdpa` for prefill (fastest in 4 of 4 classes, tied within noise in 1) and
// `cuda.decode` for decode (fastest in 5 of 6 classes; `cudnn.sdpa` in 1)."
void deploy(const std::vector<Leader>& leads, std::vector<Finding>& out) {
  std::vector<std::string> parts;
  for (const Leader& l : leads) {
    std::string part =
        fmt::format("{} for {} (fastest in {} of {}", code(l.provider), to_string(l.kind), l.won,
                    count_of(l.classes, "class", "classes"));
    if (l.tied > 0) part += fmt::format(", tied within noise in {}", l.tied);
    for (std::size_t i = 0; i < l.others.size(); ++i) {
      part += fmt::format("{}{} in {}", i == 0 ? "; " : ", ", code(l.others[i].first),
                          l.others[i].second);
    }
    parts.push_back(part + ")");
  }
  std::string text = "Deploy ";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  out.push_back({"deploy", text + ".", ""});
}

// A row this far above a measured ceiling (% of it) shows the ceiling is not the device's limit;
// a little above (101%) is the ceiling's own noise.
constexpr double kBeyondTheCeiling = 110;

// What binds each leader where it leads: compute- or memory-bound shapes, from the measured
// ceilings, and the most of each ceiling it reached.
void binds(const std::vector<Result>& rows, const std::vector<ClassAnswer>& answers,
           const std::vector<Leader>& leads, std::vector<Finding>& out) {
  std::vector<std::string> parts;
  std::vector<std::string> seen;
  for (const Leader& l : leads) {
    if (std::find(seen.begin(), seen.end(), l.provider) != seen.end()) continue;
    seen.push_back(l.provider);
    int64_t compute = 0, memory = 0;
    double flops = 0, bw = 0;
    for (const Result& r : rows) {
      if (r.provider != l.provider || !passed_and_timed(r) || r.bound.empty()) continue;
      const ShapeClass cls = shape_class(r.spec);
      const std::string where = fmt::format("{}, {}", r.device, r.timing.mode);
      const bool led = std::any_of(answers.begin(), answers.end(), [&](const ClassAnswer& a) {
        return a.fastest == l.provider && a.shape_class.label == cls.label && a.where == where;
      });
      if (!led) continue;
      if (r.bound == "compute") {
        ++compute;
        flops = std::max(flops, r.pct_peak_flops.value_or(0));
      } else {
        ++memory;
        bw = std::max(bw, r.pct_peak_bw.value_or(0));
      }
    }
    if (compute + memory == 0) continue;
    // The resource that binds most of those shapes, and how near its ceiling the provider gets:
    // what is left to gain there. (Counts per provider are in its own section further down.)
    const bool by_compute = compute >= memory;
    const double near = by_compute ? flops : bw;
    if (near > kBeyondTheCeiling) {
      // Well above its ceiling: that figure is not this device's limit for this provider's
      // kernels (a CPU whose AVX-512 peak OpenBLAS's AVX2 sgemm does not reach), so it says
      // nothing of what binds it.
      parts.push_back(fmt::format(
          "{} runs at up to {}% of the measured {} where it leads: above it, so that ceiling "
          "(`attnprof peaks`) is not this device's limit for its kernels and what binds it is "
          "not known",
          code(l.provider), format_sig3(near), by_compute ? "FLOP/s ceiling" : "bandwidth"));
      continue;
    }
    std::string text =
        near > 0
            ? fmt::format(
                  "{} reaches up to {}% of the measured {} where it leads, so {} binds "
                  "it",
                  code(l.provider), format_sig3(near), by_compute ? "FLOP/s ceiling" : "bandwidth",
                  by_compute ? "compute" : "memory bandwidth")
            : fmt::format("{} binds {} where it leads", by_compute ? "compute" : "memory bandwidth",
                          code(l.provider));
    const double other = by_compute ? bw : flops;
    if (compute > 0 && memory > 0) {
      text +=
          fmt::format(" at most shapes, {} at the others{}", by_compute ? "bandwidth" : "compute",
                      other > 0 ? fmt::format(" (up to {}%)", format_sig3(other)) : "");
    }
    parts.push_back(text);
  }
  if (parts.empty()) return;
  out.push_back({"binds", fmt::format("{}.", fmt::join(parts, "; ")), ""});
}

// "grows as N^2.00 (96.0 MiB to 6.00 GiB over N 1024–8192)", "is constant at 256 B", "is none".
std::string growth_of(const MemoryGrowth& m) {
  if (m.no_extra) return "is none";
  if (m.fit->constant) return "is " + describe_growth(*m.fit, m.y_min);
  if (m.fit->r2 < kClearGrowthFit) return "follows no clear power of N";
  std::string s = "grows as " + describe_growth(*m.fit, m.y_min);
  if (m.y_first > 0) {
    s += fmt::format(" ({} to {} over N {}–{})", format_bytes(m.y_first), format_bytes(m.y_last),
                     m.n_min, m.n_max);
  }
  return s;
}

// The leader's memory growth against the baseline's, on the first series that fits both (else
// the leader's alone).
void memory(const std::vector<Result>& rows, const std::vector<Leader>& leads,
            const std::string& baseline, std::vector<Finding>& out) {
  if (leads.empty()) return;
  Tally overall;
  for (const Leader& l : leads)
    for (int64_t i = 0; i < l.won; ++i) overall.add(l.provider);
  const std::string lead = overall.ranked().front();
  const std::vector<MemoryGrowth> growth = memory_growth(group_series(rows));
  const auto fitted = [](const MemoryGrowth& m) { return m.no_extra || m.fit.has_value(); };
  const MemoryGrowth* mine = nullptr;
  const MemoryGrowth* base = nullptr;
  for (const MemoryGrowth& m : growth) {
    if (m.provider != lead || !fitted(m)) continue;
    for (const MemoryGrowth& b : growth) {
      if (b.provider == baseline && b.series == m.series && fitted(b) && lead != baseline) {
        mine = &m;
        base = &b;
        break;
      }
    }
    if (base) break;
    if (!mine) mine = &m;
  }
  if (!mine) return;
  std::string text =
      fmt::format("On {}, the extra memory of {} {}", mine->series, code(lead), growth_of(*mine));
  if (base) text += fmt::format(" and of {} {}", code(baseline), growth_of(*base));
  out.push_back({"memory", text + ".", lead});
}

// The tune's answer with the most tokens/s at its optimal batch.
void batch_to_deploy(const TuneSummary& t, std::vector<Finding>& out) {
  const TuneAnswer* best = nullptr;
  int64_t none = 0;
  for (const TuneAnswer& a : t.answers) {
    if (!a.largest) {
      ++none;
      continue;
    }
    if (a.axis == "batch" && (!best || a.tokens_per_s > best->tokens_per_s)) best = &a;
  }
  if (!best) return;
  std::string text = fmt::format(
      "Batch to deploy under {}: {} at batch {} of {}, the most tokens/s of the {} tuned ({} "
      "tokens/s, p95 {} from {} samples, peak memory {}; up to batch {} fits)",
      tune_limits(t), code(best->provider), best->optimal ? *best->optimal : *best->largest,
      best->shape, count_of(int64_t(t.answers.size()), "provider", "providers"),
      format_rate(best->tokens_per_s), format_duration_us(best->p95_us), best->samples,
      format_bytes(double(best->peak_bytes)), *best->largest);
  if (none > 0)
    text += fmt::format("; {} no batch", count_of(none, "provider fits", "providers fit"));
  out.push_back({"tune", text + ".", best->provider});
}

// Points that broke (incorrect, failed, timed out): counted per provider; the "Did not pass"
// table has each one's reason.
void broken(const std::vector<Result>& rows, std::vector<Finding>& out) {
  Tally providers;
  std::map<std::string, Tally> statuses;
  int64_t total = 0;
  for (const Result& r : rows) {
    if (r.status != Status::incorrect && r.status != Status::failed && r.status != Status::timeout)
      continue;
    ++total;
    providers.add(r.provider);
    statuses[r.provider].add(std::string(to_string(r.status)));
  }
  if (total == 0) return;
  std::vector<std::string> parts;
  for (const std::string& p : providers.order) {
    std::vector<std::string> counts;
    for (const std::string& s : statuses[p].order)
      counts.push_back(fmt::format("{} {}", statuses[p].count.at(s), s));
    parts.push_back(fmt::format("{} ({})", code(p), fmt::join(counts, ", ")));
  }
  out.push_back(
      {"failures",
       fmt::format("{} point{} did not pass and {} left out of every comparison: {} "
                   "(\"Did not pass\" has the reasons).",
                   total, total == 1 ? "" : "s", total == 1 ? "is" : "are", fmt::join(parts, ", ")),
       ""});
}

// Noisy rows, and why each is noisy as its stop reason says: a busy host (the samples converged,
// on a machine others were using), too few samples, or the median's noise above the bound.
void noisy(const std::vector<Result>& rows, std::vector<Finding>& out) {
  int64_t timed = 0, noisy = 0, busy = 0, few = 0;
  double busiest = 0;
  for (const Result& r : rows) {
    if (r.status != Status::passed || r.timing.samples == 0) continue;
    ++timed;
    if (!r.timing.noisy) continue;
    ++noisy;
    if (r.timing.stop_reason.find("host busy") != std::string::npos) {
      ++busy;
      busiest = std::max(busiest, r.timing.host_busy);
    } else if (r.timing.stop_reason.find("--min-samples") != std::string::npos) {
      ++few;
    }
  }
  if (noisy == 0) return;
  std::vector<std::string> why;
  if (busy > 0) {
    why.push_back(fmt::format(
        "{} sampled while other processes used up to {:.0f}% of the host's CPU time (their "
        "medians converged, on a busy machine: run again on a quiet one)",
        busy, 100 * busiest));
  }
  if (few > 0) {
    why.push_back(fmt::format(
        "{} stopped at the time limit with fewer samples than --min-samples asks for", few));
  }
  if (const int64_t rest = noisy - busy - few; rest > 0) {
    why.push_back(
        fmt::format("{} stopped at the limit with the median's noise above the bound", rest));
  }
  const bool timing_limited = few + (noisy - busy - few) > 0;
  out.push_back(
      {"noise",
       fmt::format("{} of {} timed rows are noisy: {}{}.", noisy, timed, fmt::join(why, "; "),
                   timing_limited ? " (a longer --point-timeout gives them more samples)" : ""),
       ""});
}

}  // namespace

std::vector<Finding> headline_findings(const std::vector<Result>& rows,
                                       const std::vector<ClassAnswer>& answers,
                                       const std::string& baseline,
                                       const std::optional<TuneSummary>& tune) {
  std::vector<Finding> out;
  const std::vector<Leader> leads = leaders(answers);
  if (!leads.empty()) deploy(leads, out);
  binds(rows, answers, leads, out);
  memory(rows, leads, baseline, out);
  if (tune) batch_to_deploy(*tune, out);
  broken(rows, out);
  noisy(rows, out);
  if (out.size() > kMaxHeadline) out.resize(kMaxHeadline);
  return out;
}

}  // namespace attnprof
