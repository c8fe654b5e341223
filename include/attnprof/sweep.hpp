// A sweep: every (Spec, Provider) of a grid, in order, each Result handed to the sinks as it
// finishes. One failing point never ends the sweep. Where a point runs is the executor's business:
// in this process (make_in_process_executor) or in a worker process (supervisor.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/env.hpp"
#include "attnprof/interrupt.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/sink.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// The engines a sweep may use, by device kind (null where not built).
struct Engines {
  Engine* cpu = nullptr;
  Engine* cuda = nullptr;
  Engine* for_kind(DeviceKind k) const { return k == DeviceKind::cpu ? cpu : cuda; }
};

struct SweepSummary {
  int64_t total = 0;    // points planned
  int64_t resumed = 0;  // points not run: the journal (or an earlier point) had their row
  std::map<Status, int64_t> by_status;  // rows written by this sweep
  int stop_signal = 0;  // SIGINT or SIGTERM when the sweep was stopped early, else 0
  int64_t count(Status s) const {
    auto it = by_status.find(s);
    return it == by_status.end() ? 0 : it->second;
  }
};

// The points of a sweep in run order: spec-major (every provider at one shape, then the next),
// each provider under every combination of the values given for its settings (--set: by
// provider name; setting_combinations), one after the other.
struct Point {
  Spec spec;
  Provider* provider = nullptr;
  Settings settings;  // the provider's settings at this point (provider_settings.hpp)
};
using SettingsByProvider = std::map<std::string, SettingValues>;
std::vector<Point> plan_points(const std::vector<Spec>& specs,
                               const std::vector<Provider*>& providers,
                               const SettingsByProvider& settings = {});

// The series a spec belongs to for the OOM skip rule: the spec with its size axes (batch,
// q_len, kv_len) cleared. After an oom, points of the same provider and series whose
// batch * q_len * kv_len is at least the failed one's are skipped.
std::string series_key(const Spec& spec);
int64_t series_size(const Spec& spec);

// Identifies a row for --resume: provider, spec and fingerprint_key(env) (build and device).
std::string resume_key(const std::string& provider, const Spec& spec, const Fingerprint& env);

// Runs points for a sweep.
class Executor {
 public:
  virtual ~Executor() = default;
  // Whether points of this device kind can be run at all (an engine of that kind is built).
  virtual bool has_engine(DeviceKind kind) const = 0;
  // The environment fingerprint rows of this kind carry; part of their resume key. Kinds without
  // an engine carry the CPU's (the build's identity on this host).
  virtual const Fingerprint& fingerprint(DeviceKind kind) = 0;
  // The fingerprint of the rows of `provider`: that of its kind (of its worker group's process,
  // where the provider runs where other library versions load: Provider::worker_group()), plus
  // the provider's own entries (Provider::fingerprint(): its libraries' versions). A point's
  // rows add its settings (point_env).
  virtual const Fingerprint& fingerprint(const Provider& provider) = 0;
  // Runs one point of a kind that has an engine. Never throws. nullopt only when a stop was
  // requested at once (StopRequest::stop_now) and the point was abandoned without a row.
  virtual std::optional<Result> run(const Point& point) = 0;
};

// Runs points with run_point() on the given engines, in this process, with the hooks `hooks`
// makes for the options (none when empty).
std::unique_ptr<Executor> make_in_process_executor(const Engines& engines,
                                                   const RunOptions& options,
                                                   HooksFactory hooks = {});

struct SweepControl {
  // Rows of an earlier run of the sweep (--resume): planned points whose resume_key has a row
  // here are not run again, and their oom rows feed the skip rule.
  const std::vector<Result>* journal = nullptr;
  // Sinks that get the journal row of each point not run again, in plan order, so a CSV or
  // Markdown file written by a resumed sweep still covers the whole grid.
  std::vector<Sink*> replay;
  // Checked between points: once a stop is requested, the sweep ends before the next point.
  const StopRequest* stop = nullptr;
  // The seed rows of points the sweep does not run carry (the executor's run options' seed).
  uint64_t seed = RunOptions{}.seed;
};

// The points --resume runs again although the journal holds a row of them from another build or
// device (the same provider and spec under another fingerprint_key): their new rows go in beside
// the old. `differs` is the first such row's fingerprint_difference from this run's.
struct ResumedElsewhere {
  int64_t points = 0;
  std::string differs;
};
ResumedElsewhere resumed_elsewhere(const std::vector<Point>& points, Executor& executor,
                                   const std::vector<Result>& journal);

SweepSummary run_sweep(const std::vector<Point>& points, Executor& executor,
                       const std::vector<Sink*>& sinks, const SweepControl& control = {});

// The env a point's row carries: its provider's fingerprint and its settings ("setting.NAME").
Fingerprint point_env(Executor& executor, const Point& point);

// In this process, on `engines`.
SweepSummary run_sweep(const std::vector<Point>& points, const Engines& engines,
                       const RunOptions& options, const std::vector<Sink*>& sinks);

}  // namespace attnprof
