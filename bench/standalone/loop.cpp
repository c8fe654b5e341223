// A standalone loop of one CPU provider's call, as a user's program would time it: the point's
// tensors and prepare() once, then `launches` calls of launch() back to back, each timed with
// steady_clock, in a process that does nothing else (no verification, no audits, no worker, no
// harness between the launches). bench/cpu_timeit.sh sets its median beside `attnprof run`'s.
//   attnprof_standalone_loop PROVIDER N LAUNCHES [THREADS]   (B 1, H 8, D 64, fp32, no mask)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/registry.hpp"

int main(int argc, char** argv) {
  using namespace attnprof;
  if (argc < 4) {
    fmt::print(stderr, "usage: {} PROVIDER N LAUNCHES [THREADS]\n", argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  const int64_t n = std::atoll(argv[2]);
  const int launches = std::atoi(argv[3]);
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  Provider* p = find_provider(name);
  if (p == nullptr || launches < 1 || n < 1) {
    fmt::print(stderr, "unknown provider {} or bad N / LAUNCHES\n", name);
    return 2;
  }
  Spec s;
  s.batch = 1;
  s.q_heads = s.kv_heads = 8;
  s.q_len = s.kv_len = n;
  s.head_dim = 64;
  s.dtype = DType::fp32;
  std::unique_ptr<Engine> engine = make_cpu_engine(threads);
  std::unique_ptr<PointTensors> tensors =
      engine->allocate(s, p->traits().writes_lse, InputFill{20261129, InputPattern::random});
  PrepareContext ctx;
  ctx.threads = engine->device().threads;
  ctx.stream = &engine->stream();
  std::unique_ptr<Run> run = p->prepare(s, engine->device(), ctx, tensors->io());
  const Io first[] = {tensors->io()};
  run->bind(first);
  run->launch(engine->stream(), tensors->io());  // a warm-up, as attnprof run does
  std::vector<double> ms;
  for (int i = 0; i < launches; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run->launch(engine->stream(), tensors->io());
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  fmt::print("{} N{} threads {}: median {:.3f} ms, min {:.3f} ms over {} launches\n", name, n,
             ctx.threads, ms[ms.size() / 2], ms.front(), ms.size());
  return 0;
}
