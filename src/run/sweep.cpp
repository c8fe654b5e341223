#include "attnprof/sweep.hpp"

#include <fmt/format.h>

#include "attnprof/env.hpp"

namespace attnprof {

std::vector<Point> plan_points(const std::vector<Spec>& specs,
                               const std::vector<Provider*>& providers) {
  std::vector<Point> points;
  points.reserve(specs.size() * providers.size());
  for (const Spec& s : specs) {
    for (Provider* p : providers) points.push_back({s, p});
  }
  return points;
}

std::string series_key(const Spec& spec) {
  Spec s = spec;
  s.batch = 0;
  s.q_len = 0;
  s.kv_len = 0;
  return s.key();
}

int64_t series_size(const Spec& spec) {
  // Saturating: a spec that overflows this is rejected by validate() long before.
  const double size = static_cast<double>(spec.batch) * static_cast<double>(spec.q_len) *
                      static_cast<double>(spec.kv_len);
  return size > 9.0e18 ? INT64_MAX : static_cast<int64_t>(size);
}

SweepSummary run_sweep(const std::vector<Point>& points, const Engines& engines,
                       const RunOptions& options, const std::vector<Sink*>& sinks) {
  SweepSummary summary;
  summary.total = static_cast<int64_t>(points.size());
  for (Sink* s : sinks) s->begin(summary.total);
  // (provider, series) -> size of the smallest point that ran out of memory.
  std::map<std::pair<std::string, std::string>, int64_t> oom_at;
  std::map<DeviceKind, Fingerprint> env_cache;

  for (const Point& pt : points) {
    Result r;
    Engine* engine = engines.for_kind(pt.provider->device_kind());
    const auto key = std::make_pair(pt.provider->name(), series_key(pt.spec));
    if (auto it = oom_at.find(key); it != oom_at.end() && series_size(pt.spec) >= it->second) {
      r.provider = pt.provider->name();
      r.spec = pt.spec;
      r.status = Status::skipped;
      r.reason = "skipped: a smaller size of this series ran out of memory";
    } else if (engine == nullptr) {
      r.provider = pt.provider->name();
      r.spec = pt.spec;
      r.status = Status::not_supported;
      r.reason = fmt::format("no {} engine in this build", to_string(pt.provider->device_kind()));
    } else {
      r = run_point(pt.spec, *pt.provider, *engine, options);
      auto [env, fresh] = env_cache.try_emplace(engine->kind());
      if (fresh) {
        env->second = environment_fingerprint(engine->device());
        for (auto& [k, v] : engine->fingerprint()) env->second[k] = v;
      }
      r.env = env->second;
      if (r.status == Status::oom) {
        auto& at = oom_at.try_emplace(key, series_size(pt.spec)).first->second;
        at = std::min(at, series_size(pt.spec));
      }
    }
    ++summary.by_status[r.status];
    for (Sink* s : sinks) s->write(r);
  }
  for (Sink* s : sinks) s->end();
  return summary;
}

}  // namespace attnprof
