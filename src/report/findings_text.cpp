// The findings as sentences, one topic at a time.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "report/findings.hpp"
#include "report/precision.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

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

// Two providers over the shapes both ran: mine's median over theirs at each, and the pair
// (mine, theirs) at theirs' largest FLOP count.
struct SharedShapes {
  std::vector<double> ratios;
  std::pair<const Result*, const Result*> largest{nullptr, nullptr};
};
SharedShapes shared_shapes(const std::map<std::string, const Result*>& mine,
                           const std::map<std::string, const Result*>& theirs) {
  SharedShapes out;
  for (const auto& [key, tr] : theirs) {
    const auto it = mine.find(key);
    if (it == mine.end()) continue;
    out.ratios.push_back(it->second->timing.median_us / tr->timing.median_us);
    if (!out.largest.first || tr->flops > out.largest.second->flops) out.largest = {it->second, tr};
  }
  return out;
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
      auto [ratios, big] = shared_shapes(mine, by_shape(rows, f));
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
        code(best), format_times(s.geomean), code(u), s.n, spans(s) ? ", " + range_of(s) : "");
    const auto [ur, fr] = largest;
    text += fmt::format("; at the largest shared shape, {}, it is {} faster", ur->spec.label(),
                        format_times(ur->timing.median_us / fr->timing.median_us));
    if (ur->memory.peak_bytes > 0 && fr->memory.peak_bytes > 0) {
      text += fmt::format(" and holds {} of extra memory against {}",
                          format_bytes(double(fr->memory.extra_bytes)),
                          format_bytes(double(ur->memory.extra_bytes)));
    }
    out.push_back({"fused", text + ".", u});
  }
}

// The math backend (unfused, fp32 upcasts) against the naive one: time over the shapes both ran,
// extra memory at the largest. The naive provider of the same library is preferred.
void math_vs_naive(const std::vector<Result>& rows, std::vector<Finding>& out) {
  const std::vector<std::string> providers = passed_providers(rows);
  const auto family_of = [&](const std::string& p) {
    const ProviderTraits* t = traits_in(rows, p);
    return t && t->role != Role::gqa_expansion ? std::optional<Family>(t->family) : std::nullopt;
  };
  for (const std::string& m : providers) {
    if (family_of(m) != Family::math) continue;
    const ProviderTraits* mt = traits_in(rows, m);
    const auto mine = by_shape(rows, m);
    std::string naive;
    std::vector<double> ratios;
    std::pair<const Result*, const Result*> largest{nullptr, nullptr};
    for (const std::string& n : providers) {
      if (family_of(n) != Family::naive) continue;
      auto [r, big] = shared_shapes(mine, by_shape(rows, n));
      const bool same_library = traits_in(rows, n)->library == mt->library;
      const bool better = !r.empty() && (naive.empty() || r.size() > ratios.size() ||
                                         (r.size() == ratios.size() && same_library));
      if (better) {
        naive = n;
        ratios = r;
        largest = big;
      }
    }
    if (naive.empty()) continue;
    const Spread s = spread(ratios);
    std::string text = fmt::format(
        "Math against naive: {} takes {} the time of {} (geomean over {} "
        "shared shapes{})",
        code(m), format_times(s.geomean), code(naive), s.n, spans(s) ? ", " + range_of(s) : "");
    const auto [mr, nr] = largest;
    if (mr->memory.peak_bytes > 0 && nr->memory.peak_bytes > 0) {
      text += fmt::format("; at the largest, {}, {} of extra memory against {}", mr->spec.label(),
                          format_bytes(double(mr->memory.extra_bytes)),
                          format_bytes(double(nr->memory.extra_bytes)));
    }
    out.push_back({"math", text + ".", m});
  }
}

// Compute- or memory-bound, per provider, from the measured ceilings (rows' `bound`, set where
// `attnprof peaks` measured the device): how many shapes each, and the best share of the peak.
void boundness(const std::vector<Result>& rows, std::vector<Finding>& out) {
  for (const std::string& p : passed_providers(rows)) {
    int64_t compute = 0, memory = 0, far_below = 0;
    double best_flops = 0, best_bw = 0;
    for (const Result& r : rows) {
      if (r.provider != p || r.status != Status::passed || r.bound.empty()) continue;
      (r.bound == "compute" ? compute : memory) += 1;
      best_flops = std::max(best_flops, r.pct_peak_flops.value_or(0));
      best_bw = std::max(best_bw, r.pct_peak_bw.value_or(0));
      // Under 10% of the ceiling its position says binds it: the roof does not limit this point
      // (launch overhead, latency, too little parallel work), and the label alone would mislead.
      const auto binding = r.bound == "compute" ? r.pct_peak_flops : r.pct_peak_bw;
      if (binding && *binding < 10) ++far_below;
    }
    if (compute + memory == 0) continue;
    // "up to x%" only where the rows carry % of the measured ceilings (schema 2 and later).
    const auto up_to = [](double pct, const char* ceiling) {
      return pct > 0
                 ? fmt::format(" (up to {}% of the measured {} ceiling)", format_sig3(pct), ceiling)
                 : std::string();
    };
    const auto at_all = [](int64_t n) {
      return n == 1   ? std::string("at its one shape")
             : n == 2 ? std::string("at both shapes")
                      : fmt::format("at all {} shapes", n);
    };
    std::string text;
    if (memory == 0) {
      text = fmt::format("{} is compute-bound {}{}", code(p), at_all(compute),
                         up_to(best_flops, "TFLOP/s"));
    } else if (compute == 0) {
      text = fmt::format("{} is memory-bound {}{}", code(p), at_all(memory),
                         up_to(best_bw, "bandwidth"));
    } else {
      text = fmt::format("{} is compute-bound at {} and memory-bound at {} shapes", code(p),
                         compute, memory);
      if (best_flops > 0 || best_bw > 0) {
        text += fmt::format(" (up to {}% of the TFLOP/s ceiling, {}% of the bandwidth ceiling)",
                            format_sig3(best_flops), format_sig3(best_bw));
      }
    }
    if (far_below > 0) {
      text += fmt::format(
          "; at {} of them under 10% of that ceiling: neither compute nor bandwidth limits "
          "those, latency and launch overhead do",
          far_below == compute + memory ? std::string("all") : std::to_string(far_below));
    }
    // Above the ceiling by more than the noise of either figure: the ceiling, not the provider, is
    // what is wrong (measured on a busy host, or on another clock), and every % of it misleads.
    if (std::max(best_flops, best_bw) > 110) {
      text +=
          "; above 100% the measured ceiling is too low (measured on a busy host or at "
          "another clock): `attnprof peaks --refresh` on an idle machine";
    }
    out.push_back({"bound", text + ".", p});
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
      out.push_back({"gqa",
                     fmt::format("GQA expansion: {} and {} share no GQA shape (kv_heads < "
                                 "q_heads) in these rows, so its cost is not measured.",
                                 code(expand), code(plain)),
                     expand});
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
    out.push_back({"gqa", text + ".", expand});
  }
}

// Providers that declare themselves a variant of another (ProviderTraits::variant_of, no role):
// the same library's other form of the point (ONNX Runtime's graph forms against the exported
// naive graph, cuDNN's inference forward against its training forward), as a time ratio.
void variants(const std::vector<Result>& rows, std::vector<Finding>& out) {
  for (const std::string& v : passed_providers(rows)) {
    const ProviderTraits* t = traits_in(rows, v);
    if (!t || t->role != Role::none || t->variant_of.empty()) continue;
    const auto [ratios, largest] = shared_shapes(by_shape(rows, v), by_shape(rows, t->variant_of));
    if (ratios.empty()) continue;
    const Spread s = spread(ratios);
    std::string text = fmt::format(
        "Forms of one library: {} takes {} the time of {} (geomean over {} shared shape{}{})",
        code(v), format_times(s.geomean), code(t->variant_of), s.n, s.n == 1 ? "" : "s",
        spans(s) ? fmt::format(", {}", range_of(s)) : "");
    const auto [vr, br] = largest;
    text += fmt::format("; at the largest, {}, {} against {}", vr->spec.label(),
                        format_duration_us(vr->timing.median_us),
                        format_duration_us(br->timing.median_us));
    // What each form ended in there: the kernel it spent the most time in.
    const std::string vk = main_kernel(*vr), bk = main_kernel(*br);
    if (!vk.empty() && !bk.empty() && vk != bk) {
      text += fmt::format(", mostly in {} against {}", code(truncate_to_width(one_line(vk), 70)),
                          code(truncate_to_width(one_line(bk), 70)));
    } else if (!vk.empty() && vk == bk) {
      text += fmt::format(", both mostly in {}", code(truncate_to_width(one_line(vk), 70)));
    }
    out.push_back({"variant", text + ".", v});
  }
}

// A paged KV cache against contiguous K and V: per provider and page size, its paged time over
// its own contiguous time at the same shape (the rows of `--page-size 0,16,64`).
void paged(const std::vector<Result>& rows, std::vector<Finding>& out) {
  for (const std::string& p : passed_providers(rows)) {
    const auto mine = by_shape(rows, p);
    std::map<int64_t, std::vector<double>> ratios;  // by page size
    std::map<int64_t, std::pair<const Result*, const Result*>> largest;
    for (const auto& [key, r] : mine) {
      if (!r->spec.paged()) continue;
      Spec flat = r->spec;
      flat.page_size = 0;
      const auto it = mine.find(r->timing.mode + "|" + flat.key());
      if (it == mine.end()) continue;
      ratios[r->spec.page_size].push_back(r->timing.median_us / it->second->timing.median_us);
      auto& slot = largest[r->spec.page_size];
      if (!slot.first || r->flops > slot.first->flops) slot = {r, it->second};
    }
    if (ratios.empty()) continue;
    std::string text = fmt::format("Paged KV cache: {} with", code(p));
    bool first = true;
    for (const auto& [page, list] : ratios) {
      const Spread sp = spread(list);
      const auto [pr, cr] = largest[page];
      text += fmt::format(
          "{} pages of {} keys takes {} its contiguous time (geomean over {} shape{}{}; {} against "
          "{} at {})",
          first ? "" : ";", page, format_times(sp.geomean), sp.n, sp.n == 1 ? "" : "s",
          spans(sp) ? fmt::format(", {}", range_of(sp)) : "",
          format_duration_us(pr->timing.median_us), format_duration_us(cr->timing.median_us),
          cr->spec.label());
      first = false;
    }
    out.push_back({"paged", text + ".", p});
  }
}

// What a logit softcap and attention sinks cost each provider: its time with the modifier against
// its time at the same shape without (the gemma-2 and gpt-oss presets run both).
void score_modifiers(const std::vector<Result>& rows, std::vector<Finding>& out) {
  for (const std::string& p : passed_providers(rows)) {
    const auto mine = by_shape(rows, p);
    for (const bool cap : {true, false}) {
      std::vector<double> ratios;
      std::pair<const Result*, const Result*> largest{nullptr, nullptr};
      for (const auto& [key, r] : mine) {
        if (cap ? r->spec.softcap <= 0 || r->spec.sinks : !r->spec.sinks || r->spec.softcap > 0)
          continue;
        Spec plain = r->spec;
        plain.softcap = 0;
        plain.sinks = false;
        const auto it = mine.find(r->timing.mode + "|" + plain.key());
        if (it == mine.end()) continue;
        ratios.push_back(r->timing.median_us / it->second->timing.median_us);
        if (!largest.first || r->flops > largest.first->flops) largest = {r, it->second};
      }
      if (ratios.empty()) continue;
      const Spread sp = spread(ratios);
      const auto [mr, pr] = largest;
      out.push_back(
          {"modifiers",
           fmt::format("{}: {} takes {} its time without (geomean over {} shape{}{}; {} against {} "
                       "at {}).",
                       cap ? "Logit softcap" : "Attention sinks", code(p), format_times(sp.geomean),
                       sp.n, sp.n == 1 ? "" : "s",
                       spans(sp) ? fmt::format(", {}", range_of(sp)) : "",
                       format_duration_us(mr->timing.median_us),
                       format_duration_us(pr->timing.median_us), mr->spec.label()),
           p});
    }
  }
}

// A ragged batch against the uniform batch of the same padded shape: per provider, the share of
// its uniform-batch rate (TFLOP/s, which counts only the sequences' own work) it keeps (the rows
// of `--seqlens off,uniform:A:B`).
void ragged(const std::vector<Result>& rows, std::vector<Finding>& out) {
  for (const std::string& p : passed_providers(rows)) {
    const auto mine = by_shape(rows, p);
    std::vector<double> kept;
    std::pair<const Result*, const Result*> largest{nullptr, nullptr};
    for (const auto& [key, r] : mine) {
      if (!r->spec.ragged() || r->tflops <= 0) continue;
      Spec uniform = r->spec;
      uniform.seqlens.clear();
      const auto it = mine.find(r->timing.mode + "|" + uniform.key());
      if (it == mine.end() || it->second->tflops <= 0) continue;
      kept.push_back(r->tflops / it->second->tflops);
      if (!largest.first || r->flops > largest.first->flops) largest = {r, it->second};
    }
    if (kept.empty()) continue;
    const Spread sp = spread(kept);
    const auto [rr, ur] = largest;
    out.push_back(
        {"ragged",
         fmt::format("Ragged batches: {} keeps {:.0f}% of its uniform-batch TFLOP/s (geomean over "
                     "{} shape{}{}; {} for {} of the uniform batch's work at {}).",
                     code(p), 100 * sp.geomean, sp.n, sp.n == 1 ? "" : "s",
                     spans(sp) ? fmt::format(", {:.0f}%–{:.0f}%", 100 * sp.lo, 100 * sp.hi) : "",
                     format_duration_us(rr->timing.median_us),
                     fmt::format("{:.0f}%", 100 * rr->flops / ur->flops), rr->spec.label()),
         p});
  }
}

// Which provider reads nearest the memory's ceiling at the memory-bound shapes (rows' `bound`
// and `pct_peak_bw`, where `attnprof peaks` measured the device): decode's question.
void bandwidth_leaders(const std::vector<Result>& rows, std::vector<Finding>& out) {
  // Per shape the row nearest the ceiling, among shapes that two providers or more ran (a shape
  // only one provider ran, such as fp8 decode where only cuda.naive runs, has no leader).
  std::map<std::string, const Result*> best;
  std::map<std::string, int64_t> ran;
  for (const Result& r : rows) {
    if (!passed_and_timed(r) || r.bound != "memory" || !r.pct_peak_bw) continue;
    const std::string key = r.timing.mode + "|" + r.spec.key();
    ++ran[key];
    const Result*& b = best[key];
    if (!b || *r.pct_peak_bw > *b->pct_peak_bw) b = &r;
  }
  std::erase_if(best, [&](const auto& kv) { return ran[kv.first] < 2; });
  if (best.size() < 2) return;
  std::map<std::string, std::pair<int64_t, const Result*>> wins;  // count, the best row
  for (const auto& [key, r] : best) {
    auto& [n, top] = wins[r->provider];
    ++n;
    if (!top || *r->pct_peak_bw > *top->pct_peak_bw) top = r;
  }
  std::vector<std::pair<std::string, std::pair<int64_t, const Result*>>> order(wins.begin(),
                                                                               wins.end());
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::string text = fmt::format(
      "Nearest the bandwidth limit: of the providers that ran each of the {} memory-bound shapes "
      "that two or more ran, ",
      best.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& [p, w] = order[i];
    text += fmt::format(
        "{}{}{} at {} (up to {}% of it, at {})",
        i == 0 ? "" : (i + 1 == order.size() ? " and " : ", "), code(p),
        i == 0 ? " reads closest to the measured ceiling" : "",
        w.first == static_cast<int64_t>(best.size()) ? "all of them" : std::to_string(w.first),
        format_sig3(*w.second->pct_peak_bw), w.second->spec.label());
  }
  out.push_back({"bandwidth", text + ".", ""});
}

// One finding per provider and distinct behavior of its extra memory (none, constant, a power
// with or without a constant under it), naming the series that behave so.
void memory(const std::vector<Result>& rows, std::vector<Finding>& out) {
  enum class Kind { none, constant, power, irregular };
  const auto kind_of = [](const MemoryGrowth& m) {
    if (m.no_extra) return Kind::none;
    if (m.fit->constant) return Kind::constant;
    return m.fit->r2 >= kClearGrowthFit ? Kind::power : Kind::irregular;
  };
  // One behavior per provider: the same kind and, for powers, exponents within 0.1 of the
  // first series' and a named constant in both or neither.
  struct Behavior {
    std::string provider;
    Kind kind;
    std::vector<const MemoryGrowth*> series;
  };
  std::vector<Behavior> behaviors;
  const auto same = [](const MemoryGrowth& a, const MemoryGrowth& b) {
    const bool base_a = a.fit->base >= 0.05 * a.y_min, base_b = b.fit->base >= 0.05 * b.y_min;
    return std::abs(a.fit->exponent - b.fit->exponent) <= 0.1 && base_a == base_b;
  };
  const std::vector<MemoryGrowth> growth = memory_growth(group_series(rows));
  for (const MemoryGrowth& m : growth) {
    if (!m.no_extra && !m.fit) continue;
    const Kind k = kind_of(m);
    const auto it = std::find_if(behaviors.begin(), behaviors.end(), [&](const Behavior& b) {
      return b.provider == m.provider && b.kind == k &&
             (k != Kind::power || same(*b.series.front(), m));
    });
    if (it == behaviors.end()) {
      behaviors.push_back({m.provider, k, {&m}});
    } else {
      it->series.push_back(&m);
    }
  }
  for (const Behavior& b : behaviors) {
    // Each series' figures once; series with the same figures share them ("A and B: N ...").
    std::vector<std::pair<std::vector<std::string>, std::string>> figures;  // (series, figures)
    for (const MemoryGrowth* m : b.series) {
      std::string f = fmt::format("N {}–{}, {} points", m->n_min, m->n_max, m->points);
      if (b.kind == Kind::power || b.kind == Kind::irregular) {
        f += fmt::format(", R² {:.3f}", m->fit->r2);
        if (m->y_first > 0)
          f += fmt::format(", {} to {} ({}×)", format_bytes(m->y_first), format_bytes(m->y_last),
                           format_sig3(m->y_last / m->y_first));
      }
      const auto shared = std::find_if(figures.begin(), figures.end(),
                                       [&](const auto& entry) { return entry.second == f; });
      if (shared == figures.end()) {
        figures.push_back({{m->series}, f});
      } else {
        shared->first.push_back(m->series);
      }
    }
    std::string where;
    for (const auto& [series, f] : figures) {
      std::string names = series.front();
      for (std::size_t i = 1; i < series.size(); ++i) {
        names += (i + 1 == series.size() ? " and " : ", ") + series[i];
      }
      where += fmt::format("{}{}: {}", where.empty() ? "" : "; ", names, f);
    }
    const MemoryGrowth& first = *b.series.front();
    std::string what;
    switch (b.kind) {
      case Kind::none:
        what = "holds no memory beyond its inputs and outputs";
        break;
      case Kind::constant:
        what = "extra memory is " + describe_growth(*first.fit, first.y_min) +
               (b.series.size() > 1 ? " (in each series)" : "") + ": nothing grows with N";
        break;
      case Kind::power: {
        std::vector<std::string> seen;  // the series' descriptions, each once
        for (const MemoryGrowth* m : b.series) {
          const std::string d = describe_growth(*m->fit, m->y_min);
          if (std::find(seen.begin(), seen.end(), d) == seen.end()) seen.push_back(d);
        }
        what = "extra memory grows as " + seen.front();
        for (std::size_t t = 1; t < seen.size(); ++t) what += "; " + seen[t];
        break;
      }
      case Kind::irregular:
        what =
            "extra memory follows no power of N (a caching allocator or a first-call "
            "workspace moves it)";
        break;
    }
    out.push_back({"memory",
                   fmt::format("{}{} {} ({}).", code(b.provider), b.kind == Kind::none ? "" : ":",
                               what, where),
                   b.provider});
  }
}

}  // namespace

std::vector<Finding> compute_findings(const std::vector<Result>& results) {
  std::vector<Finding> out;
  fused_vs_unfused(results, out);
  math_vs_naive(results, out);
  gqa_expansion(results, out);
  variants(results, out);
  paged(results, out);
  score_modifiers(results, out);
  ragged(results, out);
  add_precision_findings(results, out);
  memory(results, out);
  boundness(results, out);
  bandwidth_leaders(results, out);
  add_kernel_findings(results, out);
  add_status_findings(results, out);
  return out;
}

}  // namespace attnprof
