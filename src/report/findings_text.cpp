// The findings as sentences, one topic at a time.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/findings.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

std::string times(double x) {
  return format_sig3(x) + "×";
}

// Geometric mean, minimum and maximum of positive ratios.
struct Spread {
  double geomean = 0, lo = 0, hi = 0;
  std::size_t n = 0;
};
Spread spread(const std::vector<double>& ratios) {
  Spread s;
  if (ratios.empty()) return s;
  double sum = 0;
  for (double r : ratios) sum += std::log(r);
  s.n = ratios.size();
  s.geomean = std::exp(sum / static_cast<double>(s.n));
  s.lo = *std::min_element(ratios.begin(), ratios.end());
  s.hi = *std::max_element(ratios.begin(), ratios.end());
  return s;
}

// Whether the ratios print as more than one value.
bool spans(const Spread& s) {
  return format_sig3(s.lo) != format_sig3(s.hi);
}

// "1.50–3.20×", or the one value when the ratios print the same.
std::string range_of(const Spread& s) {
  return spans(s) ? fmt::format("{}–{}", format_sig3(s.lo), times(s.hi)) : times(s.geomean);
}

// Passed rows of one provider by shape key ("<mode>|<spec key>").
std::map<std::string, const Result*> by_shape(const std::vector<Result>& rows,
                                              const std::string& provider) {
  std::map<std::string, const Result*> out;
  for (const Result& r : rows) {
    if (r.provider == provider && passed_and_timed(r)) {
      out.try_emplace(r.timing.mode + "|" + r.spec.key(), &r);
    }
  }
  return out;
}

// "`a`, `b` and `c`"
std::string code_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += code(names[i]);
  }
  return out;
}

// Shapes whose fastest providers are within noise of each other: no winner is named there,
// the tied sets are (most frequent first).
void tied_shapes(const std::vector<const Fastest*>& ties, size_t shapes,
                 std::vector<Finding>& out) {
  if (ties.empty()) return;
  std::vector<std::vector<std::string>> order;
  std::map<std::vector<std::string>, int> count;
  for (const Fastest* f : ties) {
    std::vector<std::string> set = {f->best->provider};
    for (const Result* r : f->tied) set.push_back(r->provider);
    std::sort(set.begin(), set.end());
    if (count[set]++ == 0) order.push_back(set);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto& a, const auto& b) { return count[a] > count[b]; });
  std::string text = fmt::format(
      "At {} of {} shapes the fastest providers are within measurement noise of each other "
      "(1% or their two cv added), so none is named fastest there: ",
      ties.size(), shapes);
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0) text += "; ";
    text += fmt::format("{} at {}", code_list(order[i]), count[order[i]]);
  }
  out.push_back({"fastest", text + "."});
}

void fastest(const std::vector<Result>& rows, const std::string& baseline,
             std::vector<Finding>& out) {
  // Shapes where at least two providers passed: a provider alone is not "the fastest".
  std::vector<Fastest> shapes = fastest_per_shape(rows, baseline);
  std::erase_if(shapes, [](const Fastest& f) { return f.runner_up == nullptr; });
  if (shapes.empty()) return;
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Fastest*>> wins;
  std::vector<const Fastest*> ties;
  for (const Fastest& f : shapes) {
    if (!f.tied.empty()) {
      ties.push_back(&f);
      continue;
    }
    if (!wins.contains(f.best->provider)) order.push_back(f.best->provider);
    wins[f.best->provider].push_back(&f);
  }
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return wins[a].size() > wins[b].size();
  });
  for (const std::string& p : order) {
    std::string text =
        fmt::format("{} is the fastest{} at {} of {} shapes", code(p),
                    ties.empty() ? "" : ", beyond noise,", wins[p].size(), shapes.size());
    std::vector<double> speedups;
    for (const Fastest* f : wins[p]) {
      if (f->baseline && f->baseline != f->best) {
        speedups.push_back(f->baseline->timing.median_us / f->best->timing.median_us);
      }
    }
    if (p == baseline) {
      text += " (it is the baseline)";
    } else if (!speedups.empty()) {
      const Spread s = spread(speedups);
      text += fmt::format("; there it is {} faster than {} (geomean {}{})", range_of(s),
                          code(baseline), times(s.geomean),
                          speedups.size() < wins[p].size()
                              ? fmt::format(", at the {} shapes where both ran", speedups.size())
                              : "");
    }
    out.push_back({"fastest", text + "."});
  }
  tied_shapes(ties, shapes.size(), out);
}

void fused_vs_unfused(const std::vector<Result>& rows, std::vector<Finding>& out) {
  const std::vector<std::string> providers = passed_providers(rows);
  // Unfused: the scores go through memory (naive and math families); variants that price
  // something else (GQA expansion) are compared with what they vary, not here.
  const auto unfused = [&](const std::string& p) {
    const ProviderTraits* t = traits_in(rows, p);
    return t && !t->fused && (t->family == Family::naive || t->family == Family::math) &&
           t->role != Role::gqa_expansion;
  };
  const auto fused = [&](const std::string& p) {
    const ProviderTraits* t = traits_in(rows, p);
    return t && t->fused;
  };
  for (const std::string& u : providers) {
    if (!unfused(u)) continue;
    const auto mine = by_shape(rows, u);
    // The fused provider sharing the most shapes with u, then the fastest of those.
    std::string best;
    std::vector<double> best_ratios;
    std::pair<const Result*, const Result*> largest{nullptr, nullptr};
    for (const std::string& f : providers) {
      if (!fused(f)) continue;
      std::vector<double> ratios;
      std::pair<const Result*, const Result*> big{nullptr, nullptr};
      for (const auto& [key, fr] : by_shape(rows, f)) {
        const auto it = mine.find(key);
        if (it == mine.end()) continue;
        ratios.push_back(it->second->timing.median_us / fr->timing.median_us);
        if (!big.first || fr->flops > big.second->flops) big = {it->second, fr};
      }
      if (ratios.empty()) continue;
      const bool better = ratios.size() > best_ratios.size() ||
                          (ratios.size() == best_ratios.size() &&
                           spread(ratios).geomean > spread(best_ratios).geomean);
      if (better) {
        best = f;
        best_ratios = ratios;
        largest = big;
      }
    }
    if (best.empty()) continue;
    const Spread s = spread(best_ratios);
    std::string text = fmt::format(
        "Fused against unfused: {} is {} faster than {} (geomean over {} shared shapes{})",
        code(best), times(s.geomean), code(u), s.n, spans(s) ? ", " + range_of(s) : "");
    const auto [ur, fr] = largest;
    if (ur->memory.peak_bytes > 0 && fr->memory.peak_bytes > 0) {
      text += fmt::format("; at the largest, {}, it holds {} of extra memory against {}",
                          ur->spec.label(), format_bytes(double(fr->memory.extra_bytes)),
                          format_bytes(double(ur->memory.extra_bytes)));
    }
    out.push_back({"fused", text + "."});
  }
}

void gqa_expansion(const std::vector<Result>& rows, std::vector<Finding>& out) {
  for (const std::string& expand : passed_providers(rows)) {
    const ProviderTraits* t = traits_in(rows, expand);
    if (!t || t->role != Role::gqa_expansion || t->variant_of.empty()) continue;
    const std::string& plain = t->variant_of;
    const auto plain_rows = by_shape(rows, plain);
    std::vector<double> ratios;
    std::pair<const Result*, const Result*> largest{nullptr, nullptr};
    for (const auto& [key, er] : by_shape(rows, expand)) {
      const auto it = plain_rows.find(key);
      if (it == plain_rows.end() || er->spec.kv_heads >= er->spec.q_heads) continue;
      ratios.push_back(er->timing.median_us / it->second->timing.median_us);
      if (!largest.first || er->flops > largest.first->flops) largest = {er, it->second};
    }
    if (ratios.empty()) {
      out.push_back({"gqa", fmt::format("GQA expansion: {} and {} share no GQA shape (kv_heads < "
                                        "q_heads) in these rows, so its cost is not measured.",
                                        code(expand), code(plain))});
      continue;
    }
    const Spread s = spread(ratios);
    const auto pct = [](double r) {
      const double p = (r - 1) * 100;
      return fmt::format("{}{}%", p >= 0 ? "+" : "", format_sig3(p));
    };
    std::string text = fmt::format(
        "GQA expansion: repeating the K/V heads ({} against {}) changes the time by {} (geomean "
        "over {} GQA shapes{})",
        code(expand), code(plain), pct(s.geomean), s.n,
        s.n > 1 ? fmt::format(", {} to {}", pct(s.lo), pct(s.hi)) : "");
    const auto [er, pr] = largest;
    const double extra = double(er->memory.peak_bytes - pr->memory.peak_bytes);
    if (er->memory.peak_bytes > 0 && pr->memory.peak_bytes > 0) {
      text += fmt::format(" and the peak memory by {}{} at {}", extra >= 0 ? "+" : "-",
                          format_bytes(std::fabs(extra)), er->spec.label());
    }
    out.push_back({"gqa", text + "."});
  }
}

void memory(const std::vector<Result>& rows, std::vector<Finding>& out) {
  const std::vector<MemoryGrowth> growth = memory_growth(group_series(rows));
  std::vector<std::string> order;
  std::map<std::string, std::vector<const MemoryGrowth*>> by_provider;
  for (const MemoryGrowth& m : growth) {
    if (!by_provider.contains(m.provider)) order.push_back(m.provider);
    by_provider[m.provider].push_back(&m);
  }
  for (const std::string& p : order) {
    const auto& ms = by_provider[p];
    if (ms.size() == 1) {
      const MemoryGrowth& m = *ms.front();
      const std::string where =
          fmt::format("{}, N {}–{}, {} points", m.series, m.n_min, m.n_max, m.points);
      if (m.no_extra) {
        out.push_back({"memory", fmt::format("{} holds no memory beyond its inputs and outputs "
                                             "({}).",
                                             code(p), where)});
      } else if (m.fit) {
        out.push_back(
            {"memory", fmt::format("{}: extra memory grows as {} (R² {:.3f}; {}).", code(p),
                                   format_power(m.fit->exponent), m.fit->r2, where)});
      }
      continue;
    }
    std::vector<double> exps;
    int64_t none = 0;
    for (const MemoryGrowth* m : ms) {
      if (m->fit) exps.push_back(m->fit->exponent);
      none += m->no_extra ? 1 : 0;
    }
    std::string text = fmt::format("{}: over {} fixed-batch series, ", code(p), ms.size());
    if (!exps.empty()) {
      const auto [lo, hi] = std::minmax_element(exps.begin(), exps.end());
      text += fmt::format("extra memory grows as {}", format_power(*lo));
      if (fmt::format("{:.2f}", *lo) != fmt::format("{:.2f}", *hi)) {
        text += fmt::format(" to {}", format_power(*hi));
      }
      if (none > 0) text += fmt::format(" ({} series hold no extra memory)", none);
    } else {
      text += "no memory is held beyond inputs and outputs";
    }
    out.push_back({"memory", text + "."});
  }
}

}  // namespace

std::vector<Finding> compute_findings(const std::vector<Result>& results,
                                      const std::string& baseline) {
  std::vector<Finding> out;
  fastest(results, baseline, out);
  fused_vs_unfused(results, out);
  gqa_expansion(results, out);
  memory(results, out);
  add_kernel_findings(results, out);
  add_status_findings(results, out);
  return out;
}

}  // namespace attnprof
