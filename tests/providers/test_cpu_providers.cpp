// cpu.naive and cpu.flash (src/providers/cpu/): verified against the fp64 reference over
// lengths 1..1000, q_len <, = and > kv_len, GQA ratios 1/4/8, every mask kind and dtype, both
// layouts; the mask-coverage test for every mask; poison, support and byte accounting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using testing_specs::prepare_point;

HostOutputs run_once(Provider& p, const Spec& s, const InputFill& fill, int threads) {
  const Support sup = p.supports(s, host_cpu_device());
  EXPECT_TRUE(sup.ok) << p.name() << " " << s.label() << ": " << sup.reason;
  std::unique_ptr<Engine> cpu = make_cpu_engine(threads);
  return testing_specs::run_once(p, *cpu, s, fill, threads);
}

struct Case {
  int64_t nq, nk;
  Mask mask;
};

TEST(CpuProviders, ForwardMatchesReferenceAcrossShapesMasksDtypes) {
  const std::pair<int64_t, int64_t> lens[] = {{1, 1},   {63, 63},   {129, 129}, {1000, 1000},
                                              {1, 129}, {63, 1000}, {129, 63}};
  const Mask masks[] = {{MaskKind::none, 0},
                        {MaskKind::causal_tl, 0},
                        {MaskKind::causal_br, 0},
                        {MaskKind::window, 17},
                        {MaskKind::window, 200}};
  const int64_t ratios[] = {1, 4, 8};
  const DType dtypes[] = {DType::fp32, DType::fp16, DType::bf16};
  std::unique_ptr<Provider> providers[] = {make_cpu_naive(), make_cpu_flash()};
  int n = 0;
  for (const auto& [nq, nk] : lens) {
    for (const Mask& mask : masks) {
      // Cycle the other axes so every value meets every length and mask over the sweep.
      Spec s;
      s.q_len = nq;
      s.kv_len = nk;
      s.mask = mask;
      s.kv_heads = 1 + n % 2;
      s.q_heads = s.kv_heads * ratios[n % 3];
      if (nq >= 1000) s.q_heads = std::min<int64_t>(s.q_heads, 8);
      s.kv_heads = std::min(s.kv_heads, s.q_heads);
      s.batch = nq * nk >= 1000 * 63 ? 1 : 2;
      s.dtype = dtypes[(n / 2) % 3];
      s.head_dim = n % 4 == 3 ? 32 : 64;
      s.v_head_dim = n % 5 == 4 ? 48 : 0;  // Dv != D now and then
      s.layout = n % 2 ? Layout::bshd : Layout::bhsd;
      const InputFill fill{.seed = uint64_t(1000 + n)};
      for (auto& p : providers) {
        const VerifyResult r = verify_outputs(s, fill, run_once(*p, s, fill, 2));
        EXPECT_TRUE(verify_passed(r)) << p->name() << " " << s.label() << " " << r.detail;
        EXPECT_EQ(r.nan_count, 0);
        EXPECT_GE(r.lse_max_abs_err, 0.0) << "both providers expose the LSE";
      }
      ++n;
    }
  }
}

TEST(CpuProviders, PoisonedOutputsFailVerificationUntilLaunched) {
  Spec s;
  s.q_len = s.kv_len = 70;
  s.q_heads = 4;
  s.kv_heads = 2;
  s.dtype = DType::fp32;
  const InputFill fill{.seed = 8};
  std::unique_ptr<Engine> cpu = make_cpu_engine(2);
  for (auto make : {make_cpu_naive, make_cpu_flash}) {
    std::unique_ptr<Provider> p = make();
    testing_specs::OnePoint pt = prepare_point(*p, *cpu, s, fill, 2);
    pt.tensors->poison_outputs();
    const VerifyResult poisoned = verify_outputs(s, fill, pt.tensors->read_outputs());
    EXPECT_FALSE(verify_passed(poisoned));
    EXPECT_EQ(poisoned.nan_count, s.o_elems() + s.batch * s.q_heads * s.q_len);
    pt.run->launch(cpu->stream(), pt.io());
    EXPECT_TRUE(verify_passed(verify_outputs(s, fill, pt.tensors->read_outputs()))) << p->name();
    // read_outputs copies: poisoning again does not touch what was read.
    HostOutputs kept = pt.tensors->read_outputs();
    pt.tensors->poison_outputs();
    EXPECT_TRUE(std::isfinite(kept.o[0]));
    EXPECT_TRUE(std::isnan(pt.tensors->read_outputs().o[0]));
  }
}

TEST(CpuProviders, ForwardOnlyAndHonestBytes) {
  Spec s;
  s.q_heads = s.kv_heads = 2;
  s.q_len = s.kv_len = 512;
  s.dtype = DType::fp32;
  for (auto make : {make_cpu_naive, make_cpu_flash}) {
    std::unique_ptr<Provider> p = make();
    for (Mode m : {Mode::bwd, Mode::fwd_bwd}) {
      Spec b = s;
      b.mode = m;
      const Support sup = p->supports(b, Device{});
      EXPECT_FALSE(sup.ok);
      EXPECT_NE(sup.reason.find("forward only"), std::string::npos) << sup.reason;
    }
    Device gpu;
    gpu.kind = DeviceKind::cuda;
    EXPECT_FALSE(p->supports(s, gpu).ok);
  }
  const int64_t io = (4 * 2 * 512 * 64 + 2 * 512) * 4;  // Q, K, V, O and LSE in float
  const InputFill fill{.seed = 1};
  std::unique_ptr<Engine> cpu = make_cpu_engine(2);
  MemoryTracker& tracker = *cpu->tracker();
  {
    testing_specs::OnePoint naive = prepare_point(*make_cpu_naive(), *cpu, s, fill, 2);
    // The engine holds the tensors; two workers, one 512 x 512 float score matrix each.
    EXPECT_EQ(naive.tensors->bytes(), io);
    EXPECT_EQ(naive.run->workspace_bytes(), 2 * 512 * 512 * 4);
    EXPECT_EQ(tracker.current(), io + naive.run->workspace_bytes());
  }
  EXPECT_EQ(tracker.current(), 0);
  // Flash scratch does not grow with the sequence.
  Spec longer = s;
  longer.q_len = longer.kv_len = 4096;
  testing_specs::OnePoint f1 = prepare_point(*make_cpu_flash(), *cpu, s, fill, 2);
  testing_specs::OnePoint f2 = prepare_point(*make_cpu_flash(), *cpu, longer, fill, 2);
  EXPECT_GT(f1.run->workspace_bytes(), 0);
  EXPECT_EQ(f1.run->workspace_bytes(), f2.run->workspace_bytes());
  EXPECT_GE(make_cpu_naive()->workspace_estimate(s), 512 * 512 * 4);
  EXPECT_LT(make_cpu_flash()->workspace_estimate(longer),
            make_cpu_naive()->workspace_estimate(longer));
}

// Mean of the mask-coverage V encoding (inputs.hpp) over the keys Mask::visible lets each
// query see, for dims 0..3 (index % 64, index / 64, index % 7, index % 7); 0 when it sees none.
std::vector<double> expected_coverage(const Spec& s) {
  std::vector<double> want(size_t(s.q_len * 4), 0.0);
  for (int64_t i = 0; i < s.q_len; ++i) {
    const testing_specs::CoverageMeans cov = testing_specs::coverage_means(s, i);
    for (int64_t c = 0; c < 4; ++c) want[size_t(i * 4 + c)] = cov.mean[std::min<int64_t>(c, 2)];
  }
  return want;
}

TEST(CpuProviders, MaskCoverageIsExactForEveryMask) {
  const Mask masks[] = {{MaskKind::none, 0},   {MaskKind::causal_tl, 0}, {MaskKind::causal_br, 0},
                        {MaskKind::window, 1}, {MaskKind::window, 7},    {MaskKind::window, 70}};
  std::unique_ptr<Provider> providers[] = {make_cpu_naive(), make_cpu_flash()};
  int64_t failures = 0, runs = 0;
  for (const Mask& mask : masks) {
    for (int64_t nq = 1; nq <= 300; ++nq) {
      // kv_len equal to q_len for every length; longer and shorter every fifth length.
      for (int64_t nk : {nq, nq % 5 == 0 ? nq + 37 : 0, nq % 5 == 0 ? (nq + 2) / 3 : 0}) {
        if (nk == 0) continue;
        Spec s;
        s.q_len = nq;
        s.kv_len = nk;
        s.head_dim = 4;
        s.dtype = nq % 2 ? DType::fp16 : DType::fp32;
        s.mask = mask;
        // One thread, except a few lengths where cpu.flash's query tiles are split over two
        // (the sweep above covers threading; idle OpenMP workers spin and slow a busy host).
        const InputFill fill{.seed = 3, .pattern = InputPattern::mask_coverage};
        const std::vector<double> want = expected_coverage(s);
        for (auto& p : providers) {
          const HostOutputs out = run_once(*p, s, fill, nq % 50 == 0 ? 2 : 1);
          ++runs;
          for (size_t e = 0; e < want.size(); ++e) {
            const double got = out.o[e];
            const bool ok =
                std::abs(got - want[e]) <= 1e-5 * std::abs(want[e]) || (want[e] == 0 && got == 0);
            if (!ok && ++failures <= 10)
              ADD_FAILURE() << p->name() << " " << to_string(mask) << " nq=" << nq << " nk=" << nk
                            << " i=" << e / 4 << " d=" << e % 4 << ": got " << got << ", want "
                            << want[e];
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(runs, 6 * (300 + 2 * 60) * 2);
}

}  // namespace
}  // namespace attnprof
