// The answer first (answer.hpp): the rows grouped by shape class, the fastest provider of each
// class, and every other provider held against it over the shapes both ran.
#include "report/answer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/findings.hpp"
#include "report/series.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

std::string dims(const Spec& s) {
  return s.dv() == s.head_dim ? fmt::format("D{}", s.head_dim)
                              : fmt::format("D{}/{}", s.head_dim, s.dv());
}

// What changes the problem beyond the class's own axes: the layout, a scale of its own, softcap,
// sinks, a shared latent.
std::string modifiers(const Spec& s) {
  std::string out;
  if (s.layout != Layout::bhsd) out += fmt::format(" {}", to_string(s.layout));
  if (s.scale > 0) out += fmt::format(" scale{}", s.scale);
  if (s.softcap > 0) out += fmt::format(" softcap{}", s.softcap);
  if (s.sinks) out += " sinks";
  if (s.shared_latent) out += " latent";
  return out;
}

bool is_decode(const Spec& s) {
  return s.q_len < s.kv_len && s.q_len <= kMaxDecodeQueries;
}

// "prefill D128 causal bf16" or "decode KV 8192 B64 q1 H32/8 D128 bf16" (the mask named where it
// hides a key at this shape).
std::string sub_class(const Spec& s) {
  if (!is_decode(s)) {
    return fmt::format("prefill {} {} {}{}", dims(s), to_string(s.mask), to_string(s.dtype),
                       modifiers(s));
  }
  const std::string heads = s.q_heads == s.kv_heads ? fmt::format("H{}", s.q_heads)
                                                    : fmt::format("H{}/{}", s.q_heads, s.kv_heads);
  const bool masked = s.mask.simplest(s.q_len, s.kv_len).kind != MaskKind::none;
  return fmt::format("decode KV {} B{} q{} {} {} {}{}{}", s.kv_len, s.batch, s.q_len, heads,
                     dims(s), to_string(s.dtype), masked ? " " + to_string(s.mask) : "",
                     modifiers(s));
}

// Rows that are not what a user deploys: the oracle, fault injection, and the GQA expansion that
// only prices repeating K/V heads.
bool deployable(const ProviderTraits& t) {
  return t.family != Family::reference && t.family != Family::test && t.role != Role::gqa_expansion;
}

// One class's rows: per shape (timing mode and spec key), the first passed row of each provider.
struct ClassRows {
  ShapeClass cls;
  std::string where;
  std::vector<std::string> shapes;
  std::map<std::string, std::map<std::string, const Result*>> at;
  std::vector<std::string> providers;
};

Contender against(const ClassRows& c, const std::string& best, const std::string& other) {
  Contender k;
  k.provider = other;
  std::vector<double> ratios;
  double tolerance = 0;
  for (const std::string& shape : c.shapes) {
    const auto& by = c.at.at(shape);
    const auto b = by.find(best), o = by.find(other);
    if (b == by.end() || o == by.end()) continue;
    ratios.push_back(o->second->timing.median_us / b->second->timing.median_us);
    tolerance += noise_tolerance(*b->second, *o->second);
    k.library = o->second->traits.library;
    k.side = fused_side(o->second->traits);
  }
  const Spread s = spread(ratios);
  k.ratio = s.geomean;
  k.lo = s.lo;
  k.hi = s.hi;
  k.shared = static_cast<int64_t>(s.n);
  k.tolerance = s.n > 0 ? tolerance / static_cast<double>(s.n) : 0;
  return k;
}

ClassAnswer answer_of(const ClassRows& c) {
  ClassAnswer a;
  a.shape_class = c.cls;
  a.where = c.where;
  a.shapes = static_cast<int64_t>(c.shapes.size());
  // Shapes each provider ran; the fastest is chosen among those that ran the most, so a provider
  // that ran only the easy shapes is not named for the class.
  std::map<std::string, int64_t> ran;
  std::map<std::string, double> best_us;  // per shape, the lowest median
  for (const std::string& shape : c.shapes) {
    for (const auto& [p, r] : c.at.at(shape)) {
      ++ran[p];
      auto [it, fresh] = best_us.try_emplace(shape, r->timing.median_us);
      if (!fresh) it->second = std::min(it->second, r->timing.median_us);
    }
  }
  int64_t most = 0;
  for (const auto& [p, n] : ran) most = std::max(most, n);
  double best_score = 0;
  for (const std::string& p : c.providers) {
    if (ran[p] != most) continue;
    double log_sum = 0;  // geomean of its median over the shape's lowest
    for (const std::string& shape : c.shapes) {
      const auto& by = c.at.at(shape);
      if (const auto it = by.find(p); it != by.end())
        log_sum += std::log(it->second->timing.median_us / best_us.at(shape));
    }
    const double score = log_sum / static_cast<double>(most);
    if (a.fastest.empty() || score < best_score) {
      a.fastest = p;
      best_score = score;
    }
  }
  a.fastest_shapes = most;
  const Result* any = nullptr;
  for (const std::string& shape : c.shapes) {
    const auto& by = c.at.at(shape);
    const auto it = by.find(a.fastest);
    if (it == by.end()) continue;
    const Result& r = *it->second;
    any = &r;
    if (r.bound == "compute" && r.pct_peak_flops) a.pct_flops.push_back(*r.pct_peak_flops);
    if (r.bound == "memory" && r.pct_peak_bw) a.pct_bw.push_back(*r.pct_peak_bw);
  }
  a.library = any->traits.library;
  a.side = fused_side(any->traits);
  // Held against it: providers that shared at least half of its shapes.
  const int64_t enough = std::max<int64_t>(1, (most + 1) / 2);
  for (const std::string& p : c.providers) {
    if (p == a.fastest) continue;
    Contender k = against(c, a.fastest, p);
    if (k.shared >= enough) a.others.push_back(std::move(k));
  }
  std::stable_sort(a.others.begin(), a.others.end(),
                   [](const Contender& x, const Contender& y) { return x.ratio < y.ratio; });
  return a;
}

std::string percent_range(const std::vector<double>& v, const char* of) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return format_sig3(*lo) == format_sig3(*hi)
             ? fmt::format("{}% {}", format_sig3(*hi), of)
             : fmt::format("{}–{}% {}", format_sig3(*lo), format_sig3(*hi), of);
}

// "1.04× slower (6 shapes, 1.01–1.09×)", "tied within noise (1.00×, noise 2.4%)", "1.11× faster
// at the 3 of 6 shapes it ran".
std::string versus(const Contender& k, int64_t of) {
  const std::string shapes = k.shared == of
                                 ? fmt::format("{} shape{}", k.shared, k.shared == 1 ? "" : "s")
                                 : fmt::format("{} of {} shapes", k.shared, of);
  if (k.ratio < 1 / (1 + k.tolerance)) {
    return fmt::format("{} faster at the {} it ran", format_times(1 / k.ratio), shapes);
  }
  if (k.tied()) {
    return fmt::format("tied within noise ({}, noise {}%; {})", format_times(k.ratio),
                       format_sig3(100 * k.tolerance), shapes);
  }
  const Spread s{k.ratio, k.lo, k.hi, static_cast<std::size_t>(k.shared)};
  return fmt::format("{} slower ({}{})", format_times(k.ratio), shapes,
                     spans(s) ? ", " + range_of(s) : "");
}

}  // namespace

std::string_view to_string(ShapeKind k) {
  switch (k) {
    case ShapeKind::prefill:
      return "prefill";
    case ShapeKind::decode:
      return "decode";
    case ShapeKind::paged:
      return "paged KV";
    case ShapeKind::ragged:
      return "ragged batches";
    case ShapeKind::mla:
      return "MLA";
    case ShapeKind::fp8:
      return "fp8";
    case ShapeKind::backward:
      return "backward";
  }
  return "?";
}

ShapeClass shape_class(const Spec& s) {
  using enum ShapeKind;
  const std::string sub = sub_class(s);
  if (s.mode != Mode::fwd)
    return {backward, fmt::format("backward ({}) {}", to_string(s.mode), sub)};
  if (is_fp8(s.dtype)) return {fp8, "fp8 " + sub};
  if (s.dv() != s.head_dim || s.shared_latent) return {mla, "MLA " + sub};
  if (s.paged()) return {paged, fmt::format("paged {} {}", s.page_size, sub)};
  if (s.ragged()) return {ragged, fmt::format("ragged {} {}", s.seqlens, sub)};
  return {is_decode(s) ? decode : prefill, sub};
}

bool Contender::tied() const {
  return ratio <= 1 + tolerance && ratio >= 1 / (1 + tolerance);
}

const Contender* ClassAnswer::runner_up() const {
  return others.empty() ? nullptr : &others.front();
}

std::vector<const Contender*> ClassAnswer::tied() const {
  std::vector<const Contender*> out;
  for (const Contender& k : others)
    if (k.tied()) out.push_back(&k);
  return out;
}

const Contender* ClassAnswer::other_library() const {
  for (const Contender& k : others)
    if (k.library != library) return &k;
  return nullptr;
}

const Contender* ClassAnswer::other_family() const {
  if (side == FusedSide::neither) return nullptr;
  for (const Contender& k : others)
    if (k.side != side && k.side != FusedSide::neither) return &k;
  return nullptr;
}

FusedSide fused_side(const ProviderTraits& t) {
  if (t.fused) return FusedSide::fused;
  return t.family == Family::naive || t.family == Family::math ? FusedSide::unfused
                                                               : FusedSide::neither;
}

std::vector<ClassAnswer> answer_by_class(const std::vector<Result>& rows) {
  std::vector<ClassRows> classes;
  std::map<std::string, std::size_t> index;
  for (const Result& r : rows) {
    if (!passed_and_timed(r) || !deployable(r.traits)) continue;
    const ShapeClass cls = shape_class(r.spec);
    const std::string where = fmt::format("{}, {}", r.device, r.timing.mode);
    auto [it, fresh] = index.try_emplace(where + "|" + cls.label, classes.size());
    if (fresh) classes.push_back({cls, where, {}, {}, {}});
    ClassRows& c = classes[it->second];
    const std::string shape = r.timing.mode + "|" + r.spec.key();
    auto& by = c.at[shape];
    if (by.empty()) c.shapes.push_back(shape);
    by.try_emplace(r.provider, &r);
    if (std::find(c.providers.begin(), c.providers.end(), r.provider) == c.providers.end())
      c.providers.push_back(r.provider);
  }
  std::stable_sort(classes.begin(), classes.end(),
                   [](const ClassRows& a, const ClassRows& b) { return a.cls.kind < b.cls.kind; });
  std::vector<ClassAnswer> out;
  for (const ClassRows& c : classes) out.push_back(answer_of(c));
  return out;
}

TableSection answer_table(const std::vector<ClassAnswer>& answers) {
  TableSection s;
  s.heading = "The answer: fastest per shape class";
  s.intro =
      "Per shape class, the provider with the lowest geomean time over the class's shapes (among "
      "those that ran the most of them), held against every provider that ran at least half of "
      "its shapes: a ratio within the rows' noise (1% or their two cv added, docs/method.md) is "
      "a tie. % of peak is of the measured ceiling that binds each of its rows.";
  s.table.header = {"shape class",
                    "shapes",
                    "fastest",
                    "margin over the runner-up",
                    "best of another library",
                    "best of the other family",
                    "% of measured peak"};
  s.table.right = {false, true, false, false, false, false, true};
  std::set<std::string> wheres;
  for (const ClassAnswer& a : answers) wheres.insert(a.where);
  for (const ClassAnswer& a : answers) {
    std::string margin = "only provider here";
    if (const std::vector<const Contender*> tied = a.tied(); !tied.empty()) {
      std::vector<std::string> names;
      for (const Contender* k : tied)
        names.push_back(fmt::format("{} ({}, noise {}%)", k->provider, format_times(k->ratio),
                                    format_sig3(100 * k->tolerance)));
      margin = fmt::format("tied within noise with {}", fmt::join(names, ", "));
    } else if (const Contender* k = a.runner_up()) {
      margin = fmt::format("{}: {}", k->provider, versus(*k, a.fastest_shapes));
    }
    const auto named = [&](const Contender* k, const std::string& what) {
      return k ? fmt::format("{} ({}): {}", k->provider, what, versus(*k, a.fastest_shapes))
               : std::string("none ran");
    };
    const Contender* lib = a.other_library();
    const Contender* fam = a.other_family();
    std::string pct = "-";
    if (!a.pct_flops.empty() && !a.pct_bw.empty()) {
      pct = fmt::format("up to {}% FLOP/s, {}% bandwidth",
                        format_sig3(*std::max_element(a.pct_flops.begin(), a.pct_flops.end())),
                        format_sig3(*std::max_element(a.pct_bw.begin(), a.pct_bw.end())));
    } else if (!a.pct_flops.empty()) {
      pct = percent_range(a.pct_flops, "FLOP/s");
    } else if (!a.pct_bw.empty()) {
      pct = percent_range(a.pct_bw, "bandwidth");
    }
    s.table.add({wheres.size() > 1 ? fmt::format("{} ({})", a.shape_class.label, a.where)
                                   : a.shape_class.label,
                 std::to_string(a.shapes), a.fastest, margin, named(lib, lib ? lib->library : ""),
                 named(fam, fam && fam->side == FusedSide::fused ? "fused" : "unfused"), pct});
  }
  return s;
}

}  // namespace attnprof
