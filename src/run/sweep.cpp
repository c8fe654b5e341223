#include "attnprof/sweep.hpp"

#include <fmt/format.h>

#include <set>

#include "attnprof/env.hpp"
#include "attnprof/provider_settings.hpp"
#include "attnprof/worker.hpp"

namespace attnprof {

namespace {

// Runs points with run_point() in this process.
class InProcessExecutor final : public Executor {
 public:
  InProcessExecutor(const Engines& engines, const RunOptions& options, HooksFactory hooks)
      : engines_(engines), options_(options), hooks_(std::move(hooks)) {}

  bool has_engine(DeviceKind kind) const override { return engines_.for_kind(kind) != nullptr; }

  using Executor::fingerprint;
  const Fingerprint& fingerprint(DeviceKind kind) override {
    auto [it, fresh] = cache_.try_emplace(kind);
    if (fresh) {
      if (Engine* e = engines_.for_kind(kind)) {
        it->second = engine_fingerprint(*e);
      } else if (kind != DeviceKind::cpu) {
        it->second = fingerprint(DeviceKind::cpu);
      } else {
        it->second = environment_fingerprint(host_cpu_device());
      }
    }
    return it->second;
  }

  const Fingerprint& fingerprint(const Provider& provider) override {
    auto [it, fresh] = by_provider_.try_emplace(provider.name());
    if (fresh) {
      it->second = fingerprint(provider.device_kind());
      for (const auto& [k, v] : provider.fingerprint()) it->second[k] = v;
    }
    return it->second;
  }

  std::optional<Result> run(const Point& pt) override {
    Engine& engine = *engines_.for_kind(pt.provider->device_kind());
    std::unique_ptr<PointHooks> hooks = hooks_ ? hooks_(options_, engine) : nullptr;
    return run_point(pt.spec, *pt.provider, engine, options_, hooks.get(), pt.settings);
  }

 private:
  Engines engines_;
  RunOptions options_;
  HooksFactory hooks_;
  std::map<DeviceKind, Fingerprint> cache_;
  std::map<std::string, Fingerprint> by_provider_;
};

using SeriesId = std::pair<std::string, std::string>;  // provider, series_key

SeriesId series_of(const std::string& provider, const Spec& spec) {
  return {provider, series_key(spec)};
}

// (provider, series) -> size of the smallest point that ran out of memory.
void note_oom(std::map<SeriesId, int64_t>& oom_at, const Result& r) {
  auto& at = oom_at.try_emplace(series_of(r.provider, r.spec), series_size(r.spec)).first->second;
  at = std::min(at, series_size(r.spec));
}

}  // namespace

std::vector<Point> plan_points(const std::vector<Spec>& specs,
                               const std::vector<Provider*>& providers,
                               const SettingsByProvider& settings) {
  std::vector<Point> points;
  points.reserve(specs.size() * providers.size());
  for (const Spec& s : specs) {
    for (Provider* p : providers) {
      const auto given = settings.find(p->name());
      for (Settings& c :
           setting_combinations(given == settings.end() ? SettingValues{} : given->second)) {
        points.push_back({s, p, std::move(c)});
      }
    }
  }
  return points;
}

Fingerprint point_env(Executor& executor, const Point& point) {
  Fingerprint env = executor.fingerprint(*point.provider);
  for (auto& [k, v] : settings_fingerprint(point.settings)) env[k] = std::move(v);
  return env;
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

std::string resume_key(const std::string& provider, const Spec& spec, const Fingerprint& env) {
  return fmt::format("{}|{}|{}", provider, spec.key(), fingerprint_key(env));
}

Fingerprint engine_fingerprint(Engine& engine) {
  Fingerprint f = environment_fingerprint(engine.device());
  for (auto& [k, v] : engine.fingerprint()) f[k] = v;
  return f;
}

std::unique_ptr<Executor> make_in_process_executor(const Engines& engines,
                                                   const RunOptions& options, HooksFactory hooks) {
  return std::make_unique<InProcessExecutor>(engines, options, std::move(hooks));
}

namespace {

// What the journal already holds for a sweep's points.
struct Resumed {
  std::vector<const Result*> row;      // its journal row, or null
  std::vector<bool> run;               // false: journaled, or planned before
  std::map<SeriesId, int64_t> oom_at;  // the journal's ooms of these points
  int64_t count = 0;                   // points not run
};

Resumed match_journal(const std::vector<Point>& points, Executor& executor,
                      const std::vector<Result>* journal) {
  // The first row of a key wins.
  std::map<std::string, const Result*> journaled;
  if (journal) {
    for (const Result& r : *journal) {
      journaled.try_emplace(resume_key(r.provider, r.spec, r.env), &r);
    }
  }
  Resumed m;
  std::set<std::string> planned;
  for (const Point& pt : points) {
    const std::string key = resume_key(pt.provider->name(), pt.spec, point_env(executor, pt));
    const auto it = journaled.find(key);
    const Result* row = it == journaled.end() ? nullptr : it->second;
    // A point planned twice (a repeated axis value) runs once: one row per key.
    const bool run = row == nullptr && planned.insert(key).second;
    if (row && row->status == Status::oom) note_oom(m.oom_at, *row);
    m.count += run ? 0 : 1;
    m.row.push_back(row);
    m.run.push_back(run);
  }
  return m;
}

}  // namespace

ResumedElsewhere resumed_elsewhere(const std::vector<Point>& points, Executor& executor,
                                   const std::vector<Result>& journal) {
  std::set<std::string> same;                     // resume keys in the journal
  std::map<std::string, const Result*> anywhere;  // provider and spec, any environment
  for (const Result& r : journal) {
    same.insert(resume_key(r.provider, r.spec, r.env));
    anywhere.try_emplace(r.provider + "|" + r.spec.key(), &r);
  }
  ResumedElsewhere out;
  std::set<std::string> counted;
  for (const Point& pt : points) {
    const Fingerprint env = point_env(executor, pt);
    const std::string key = resume_key(pt.provider->name(), pt.spec, env);
    const auto it = anywhere.find(pt.provider->name() + "|" + pt.spec.key());
    if (same.count(key) || it == anywhere.end() || !counted.insert(key).second) continue;
    if (out.points++ == 0) out.differs = fingerprint_difference(it->second->env, env);
  }
  return out;
}

SweepSummary run_sweep(const std::vector<Point>& points, Executor& executor,
                       const std::vector<Sink*>& sinks, const SweepControl& control) {
  Resumed resumed = match_journal(points, executor, control.journal);
  std::map<SeriesId, int64_t>& oom_at = resumed.oom_at;
  SweepSummary summary;
  summary.total = static_cast<int64_t>(points.size());
  summary.resumed = resumed.count;

  for (Sink* s : sinks) s->begin(summary.total - summary.resumed);
  // After a stop, nothing more runs, but the journal's rows are still replayed.
  bool stopped = false;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& pt = points[i];
    if (!resumed.run[i]) {
      if (resumed.row[i]) {
        for (Sink* s : control.replay) s->write(*resumed.row[i]);
      }
      continue;
    }
    if (stopped) continue;
    if (control.stop && control.stop->stop_after_point()) {
      summary.stop_signal = control.stop->signal.load();
      stopped = true;
      continue;
    }
    const DeviceKind kind = pt.provider->device_kind();
    Result r;
    if (auto it = oom_at.find(series_of(pt.provider->name(), pt.spec));
        it != oom_at.end() && series_size(pt.spec) >= it->second) {
      r = unrun_row(*pt.provider, pt.spec, control.seed, Status::skipped, Fault::none,
                    "skipped: a smaller size of this series ran out of memory");
    } else if (!executor.has_engine(kind)) {
      r = unrun_row(*pt.provider, pt.spec, control.seed, Status::not_supported,
                    Fault::not_supported, fmt::format("no {} engine in this run", to_string(kind)));
    } else {
      for (Sink* s : sinks) s->begin_point(pt.provider->name(), pt.spec);
      std::optional<Result> ran = executor.run(pt);
      if (!ran) {  // abandoned at once on a second stop signal: no row
        summary.stop_signal = control.stop ? control.stop->signal.load() : 0;
        stopped = true;
        continue;
      }
      r = std::move(*ran);
      if (r.status == Status::oom) note_oom(oom_at, r);
    }
    r.env = point_env(executor, pt);
    ++summary.by_status[r.status];
    for (Sink* s : sinks) s->write(r);
  }
  if (summary.stop_signal != 0) {
    for (Sink* s : sinks) s->stopped(summary.stop_signal);
  }
  for (Sink* s : sinks) s->end();
  return summary;
}

SweepSummary run_sweep(const std::vector<Point>& points, const Engines& engines,
                       const RunOptions& options, const std::vector<Sink*>& sinks) {
  InProcessExecutor executor(engines, options, {});
  SweepControl control;
  control.seed = options.seed;
  return run_sweep(points, executor, sinks, control);
}

}  // namespace attnprof
