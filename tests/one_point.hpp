// Running a provider by hand in the tests, the way the point lifecycle does (src/run/runner.cpp)
// but step by step: the engine's tensors, prepare, bind copy 0, poison, launch, publish, read.
#pragma once

#include <memory>

#include "attnprof/engine.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/runner.hpp"

namespace attnprof::testing_specs {

struct OnePoint {
  Spec spec;
  InputFill fill;
  std::unique_ptr<PointTensors> tensors;
  std::unique_ptr<Run> run;

  const Io& io() const { return tensors->io(); }
  // Poisons the outputs, launches once, publishes and reads them back.
  HostOutputs launch_and_read(Engine& engine) {
    tensors->poison_outputs();
    run->launch(engine.stream(), io());
    run->publish(engine.stream(), io());
    return tensors->read_outputs();
  }
};

// Prepares `p` for `s` on `engine` under `settings` (throws what prepare() throws).
inline OnePoint prepare_point(Provider& p, Engine& engine, const Spec& s, const InputFill& fill,
                              int threads = 1, const Settings& settings = {}) {
  OnePoint pt;
  pt.spec = s;
  pt.fill = fill;
  pt.tensors = engine.allocate(s, p.traits().writes_lse, fill);
  PrepareContext ctx;
  ctx.threads = threads;
  ctx.tracker = engine.tracker();
  ctx.stream = &engine.stream();
  ctx.settings = settings;
  pt.run = p.prepare(s, engine.device(), ctx, pt.tensors->io());
  const Io first[] = {pt.tensors->io()};
  pt.run->bind(first);
  return pt;
}

// One verified-style launch: the outputs of a fresh point.
inline HostOutputs run_once(Provider& p, Engine& engine, const Spec& s, const InputFill& fill,
                            int threads = 1) {
  OnePoint pt = prepare_point(p, engine, s, fill, threads);
  return pt.launch_and_read(engine);
}

// Options for points run through the lifecycle (run_point) in tests: two or three samples, no
// warm-up, no kernel trace.
inline RunOptions quick_run_options() {
  RunOptions o;
  o.warmup_launches = 0;
  o.trace_kernels = false;
  o.measure.rule.min_samples = 2;
  o.measure.rule.max_samples = 3;
  o.measure.rule.min_time_s = 1e-6;
  o.measure.rule.timeout_s = 1;
  return o;
}

}  // namespace attnprof::testing_specs
