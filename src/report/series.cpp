#include "report/series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace attnprof {

namespace {

// The spec without batch and lengths, keeping the query length when it differs from the KV
// length (decode rows at q = 1 must not join prefill rows at q = kv).
std::string base_key(const Spec& spec) {
  Spec s = spec;
  s.batch = 0;
  s.kv_len = 0;
  s.q_len = spec.q_len == spec.kv_len ? 0 : spec.q_len;
  return s.key();
}

std::string fixed_key(const Spec& spec) {
  return base_key(spec) + fmt::format("|b{}", spec.batch);
}

std::string tokens_key(const Spec& spec) {
  return base_key(spec) + fmt::format("|t{}", spec.batch * spec.q_len);
}

// The label without batch and lengths (a cross-attention's query length stays: the x axis is
// the KV length), then what is fixed: "H12 D64 fp16 causal fwd, B1".
std::string group_title(const Spec& spec, bool fixed_batch) {
  static constexpr std::string_view kSelf[] = {"batch", "seq", "kv_seq"};
  static constexpr std::string_view kCross[] = {"batch", "kv_seq"};
  const std::string out =
      spec.q_len == spec.kv_len ? spec.label_without(kSelf) : spec.label_without(kCross);
  if (fixed_batch) return fmt::format("{}, B{}", out, spec.batch);
  return fmt::format("{}, B·N = {} tokens", out, spec.batch * spec.q_len);
}

int64_t distinct_n_of(const std::vector<const Result*>& rows) {
  std::set<int64_t> n;
  for (const Result* r : rows) n.insert(row_n(*r));
  return static_cast<int64_t>(n.size());
}

}  // namespace

bool passed_and_timed(const Result& r) {
  return r.status == Status::passed && r.timing.samples > 0 && r.timing.median_us > 0;
}

std::string SeriesGroup::x_label() const {
  return self_attention ? "sequence length N" : "KV length N";
}

int64_t SeriesGroup::distinct_n() const {
  std::vector<const Result*> all;
  for (const auto& [p, rs] : rows) all.insert(all.end(), rs.begin(), rs.end());
  return distinct_n_of(all);
}

std::vector<SeriesGroup> group_series(const std::vector<Result>& results) {
  // Per base shape, group by fixed batch or by fixed tokens, whichever gives longer series.
  std::map<std::string, std::map<std::string, std::vector<const Result*>>> fixed, tokens;
  std::vector<std::string> base_order;
  for (const Result& r : results) {
    if (!passed_and_timed(r)) continue;
    const std::string base = base_key(r.spec);
    if (!fixed.contains(base)) base_order.push_back(base);
    fixed[base][fixed_key(r.spec)].push_back(&r);
    tokens[base][tokens_key(r.spec)].push_back(&r);
  }
  const auto longest = [](const std::map<std::string, std::vector<const Result*>>& groups) {
    int64_t best = 0;
    for (const auto& [k, rows] : groups) best = std::max(best, distinct_n_of(rows));
    return best;
  };
  std::vector<SeriesGroup> out;
  for (const std::string& base : base_order) {
    const bool use_fixed = longest(fixed[base]) >= longest(tokens[base]);
    const auto& groups = use_fixed ? fixed[base] : tokens[base];
    // Groups in order of their first row's appearance.
    std::vector<std::pair<const Result*, std::string>> order;
    for (const auto& [key, rows] : groups) order.emplace_back(rows.front(), key);
    std::sort(order.begin(), order.end());
    for (const auto& [first, key] : order) {
      SeriesGroup g;
      g.key = key;
      g.fixed_batch = use_fixed;
      g.title = group_title(first->spec, use_fixed);
      for (const Result* r : groups.at(key)) {
        g.self_attention = g.self_attention && r->spec.q_len == r->spec.kv_len;
        auto [it, fresh] = g.rows.try_emplace(r->provider);
        if (fresh) g.providers.push_back(r->provider);
        it->second.push_back(r);
      }
      for (auto& [p, rows] : g.rows) {
        std::stable_sort(rows.begin(), rows.end(),
                         [](const Result* a, const Result* b) { return row_n(*a) < row_n(*b); });
      }
      out.push_back(std::move(g));
    }
  }
  return out;
}

std::vector<std::string> passed_providers(const std::vector<Result>& results) {
  std::vector<std::string> out;
  for (const Result& r : results) {
    if (passed_and_timed(r) && std::find(out.begin(), out.end(), r.provider) == out.end()) {
      out.push_back(r.provider);
    }
  }
  return out;
}

std::string choose_baseline(const std::vector<Result>& results, const std::string& requested) {
  if (!requested.empty()) return requested;
  // The provider that declares itself its device's baseline (cuda.naive, cpu.naive); a GPU one
  // first, since GPU rows are what a mixed journal compares.
  std::string found;
  for (const std::string& p : passed_providers(results)) {
    for (const Result& r : results) {
      if (r.provider != p || r.traits.role != Role::baseline) continue;
      if (r.traits.device == DeviceKind::cuda) return p;
      if (found.empty()) found = p;
      break;
    }
  }
  return found;
}

std::vector<std::pair<std::string, std::vector<const Result*>>> rows_by_shape(
    const std::vector<Result>& results) {
  std::vector<std::pair<std::string, std::vector<const Result*>>> out;
  std::map<std::string, std::size_t> index;
  for (const Result& r : results) {
    if (!passed_and_timed(r)) continue;
    const std::string key = r.timing.mode + "|" + r.spec.key();
    auto [it, fresh] = index.try_emplace(key, out.size());
    if (fresh) out.emplace_back(key, std::vector<const Result*>{});
    out[it->second].second.push_back(&r);
  }
  return out;
}

}  // namespace attnprof
