// The device check (src/measure/cuda/device_check.cu): on correct outputs of real providers it
// agrees row by row with the host's fp64 check, every row of every output of every mode; it finds
// the NaN poison anywhere and names it; every test.mutant.cuda.* ends `incorrect` through the
// point lifecycle at lengths that are multiples of no tile, while its base passes; GPU rows say
// rows_checked == rows_total.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnprof/runner.hpp"
#include "attnprof/verify.hpp"
#include "cuda/device_buffer.hpp"
#include "engine_test_util.hpp"
#include "measure/cuda/device_check.hpp"
#include "measure/cuda/device_check_kept.hpp"
#include "measure/cuda/device_verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"
#include "providers/test/mutant.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using namespace testing_specs;
using test::Mutation;

cuda::CudaEngine& engine() {
  return testing::process_engine();
}

double rel(const RowCheck& c) {
  return c.ref2 > 0 ? std::sqrt(c.err2 / c.ref2) : std::sqrt(c.err2);
}

// Every row the host compared has the same error on the device, to fp64 rounding.
void expect_same_rows(const std::vector<RowCheck>& device, const std::vector<RowCheck>& host,
                      const char* tensor, const std::string& label) {
  ASSERT_EQ(device.size(), host.size()) << tensor << " " << label;
  std::map<int64_t, const RowCheck*> by_row;
  for (const RowCheck& c : device) by_row[c.row] = &c;
  double worst = 0;
  for (const RowCheck& h : host) {
    ASSERT_TRUE(by_row.count(h.row)) << tensor << " row " << h.row;
    const RowCheck& d = *by_row[h.row];
    worst = std::max(worst, std::abs(rel(d) - rel(h)));
    EXPECT_NEAR(d.ref2, h.ref2, 1e-9 * std::max(1.0, h.ref2)) << tensor << " row " << h.row;
  }
  EXPECT_LT(worst, 1e-9) << tensor << " " << label;
}

// Two verdicts on the same outputs are the same, to the worst row named.
void expect_same_verdict(const VerifyResult& a, const VerifyResult& b, const std::string& label) {
  EXPECT_EQ(a.rel_l2_err, b.rel_l2_err) << label;
  EXPECT_EQ(a.max_abs_err, b.max_abs_err) << label;
  EXPECT_EQ(a.lse_max_abs_err, b.lse_max_abs_err) << label;
  EXPECT_EQ(a.nan_count, b.nan_count) << label;
  EXPECT_EQ(a.detail, b.detail) << label;
  EXPECT_EQ(verify_passed(a), verify_passed(b)) << label;
}

struct Agreement {
  const char* provider;
  Spec spec;
};

std::unique_ptr<Provider> make(const std::string& name) {
  if (name == "cuda.naive") return make_cuda_naive();
#if defined(ATTNPROF_WITH_CUDNN)
  if (name == "cudnn.sdpa") return make_cudnn_sdpa();
#endif
  return nullptr;
}

// Runs `c` once and compares the device's check of its outputs with the host's full check.
void expect_agreement(const Agreement& c) {
  auto p = make(c.provider);
  if (!p) GTEST_SKIP() << c.provider << " is not built into this binary (cuDNN not found)";
  if (Support sup = p->supports(c.spec, engine().device()); !sup.ok) {
    ADD_FAILURE() << c.provider << " " << c.spec.label() << ": " << sup.reason;
    return;
  }
  const InputFill fill{.seed = 7};
  testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), c.spec, fill);
  const HostOutputs out = pt.launch_and_read(engine());
  VerifyOptions full;
  full.full = true;
  const RowChecks host = check_on_host(c.spec, fill, out, full);
  const RowChecks checked = engine().check_outputs(c.spec, *pt.tensors, fill, full, true);
  auto* stream = static_cast<cudaStream_t>(engine().stream().native);
  const RowChecks dev = cuda::check_on_device(c.spec, pt.io(), stream, {.all = true, .keep = {}});
  const std::string label = c.spec.label();
  EXPECT_GE(checked.disagreement, 0.0) << label;
  EXPECT_LT(checked.disagreement, 1e-9) << label;
  expect_same_verdict(judge_rows(c.spec, checked), judge_rows(c.spec, dev), label);
  EXPECT_EQ(dev.sampling, "all (device)") << label;
  EXPECT_EQ(dev.rows_checked, c.spec.batch * c.spec.q_heads * c.spec.q_len);
  EXPECT_EQ(dev.nonfinite, 0) << label << ": " << dev.first_nonfinite;
  expect_same_rows(dev.o, host.o, "o", label);
  expect_same_rows(dev.dq, host.dq, "dq", label);
  expect_same_rows(dev.dk, host.dk, "dk", label);
  expect_same_rows(dev.dv, host.dv, "dv", label);
  ASSERT_EQ(dev.lse.size(), host.lse.size()) << label;
  for (size_t t = 0; t < host.lse.size(); ++t) {
    ASSERT_EQ(dev.lse[t].first, host.lse[t].first);
    EXPECT_NEAR(dev.lse[t].second, host.lse[t].second, 1e-9) << label << " lse row " << t;
  }
  const VerifyResult v = judge_rows(c.spec, dev);
  EXPECT_TRUE(verify_passed(v)) << c.provider << " " << label << ": " << v.detail;
}

// `s` with a logit softcap and sinks.
Spec mods(Spec s, double softcap, bool sinks) {
  s.softcap = softcap;
  s.sinks = sinks;
  return s;
}

// The device's fp64 check of softcapped scores and sinks agrees with the host's on every row.
TEST(DeviceVerify, SoftcapAndSinksAgreeWithTheHost) {
  REQUIRE_ENGINE();
  expect_agreement({"cuda.naive", mods(make_spec(1, 4, 2, 300, 300, 64, fp32, kCausal), 2, true)});
  expect_agreement(
      {"cuda.naive", mods(make_spec(2, 4, 4, 129, 257, 64, bf16, window(33)), 30, false)});
  expect_agreement(
      {"cuda.naive", mods(make_spec(1, 8, 2, 1, 4097, 128, bf16, kCausalBr), 0, true)});
}

// Tiny points of every mode and a tile of each kind of edge: what compute-sanitizer runs.
TEST(DeviceVerify, TinyPointsOfEveryModeAgree) {
  REQUIRE_ENGINE();
  expect_agreement({"cuda.naive", make_spec(1, 2, 1, 33, 47, 64, fp32, kCausalBr)});
  expect_agreement({"cudnn.sdpa", make_spec(1, 2, 1, 40, 40, 64, fp16, kCausal, Mode::fwd_bwd)});
  expect_agreement({"cudnn.sdpa", make_spec(1, 2, 2, 17, 17, 64, bf16, kNone, Mode::bwd, bshd)});
}

TEST(DeviceVerify, AgreesWithTheHostOnEveryRowOfEveryOutput) {
  REQUIRE_ENGINE();
  const Agreement cases[] = {
      {"cuda.naive", make_spec(2, 4, 2, 333, 517, 64, fp32, kCausalBr, Mode::fwd, bshd)},
      {"cuda.naive", make_spec(1, 4, 4, 700, 300, 32, fp32, window(77))},  // empty rows
      {"cuda.naive", make_spec(1, 2, 1, 129, 257, 40, fp32, kNone, Mode::fwd, Layout::bhsd, 24)},
      // a paged cache: the device check reads K and V through the block table
      {"cuda.naive",
       testing_specs::paged(make_spec(2, 4, 2, 33, 517, 64, bf16, kCausalBr, Mode::fwd, bshd), 16)},
      {"cudnn.sdpa", testing_specs::paged(make_spec(2, 8, 2, 1, 3000, 128, bf16, kCausalBr), 64)},
      {"cudnn.sdpa", make_spec(2, 4, 2, 300, 300, 64, fp16, kCausal, Mode::fwd_bwd)},
      {"cudnn.sdpa", make_spec(1, 4, 4, 129, 1000, 128, fp16, window(64), Mode::fwd_bwd)},
      {"cudnn.sdpa", make_spec(2, 4, 1, 1000, 1000, 128, bf16, window(256), Mode::bwd, bshd)},
      {"cudnn.sdpa", make_spec(1, 4, 2, 1000, 1000, 256, bf16, kCausal, Mode::fwd_bwd, bshd)},
  };
  for (const Agreement& c : cases) expect_agreement(c);
}

// Mode fwd is checked through fp64 GEMMs: in chunks of pairs, or of one pair's query rows when
// the scratch is small, it gives every row the same sums as the shared-memory kernel.
TEST(DeviceVerify, GemmPathMatchesTheKernelOnEveryRowInAnyChunking) {
  REQUIRE_ENGINE();
  const Agreement cases[] = {
      {"cuda.naive", make_spec(2, 4, 2, 1000, 777, 64, fp16, kCausalBr, Mode::fwd, bshd)},
      {"cuda.naive", make_spec(1, 4, 4, 700, 300, 32, fp32, window(77))},  // empty rows
      {"cuda.naive", make_spec(1, 2, 1, 129, 257, 40, bf16, kNone, Mode::fwd, Layout::bhsd, 24)},
      {"cudnn.sdpa", make_spec(2, 4, 1, 513, 513, 128, bf16, kCausal)},  // with an LSE
      {"cuda.naive", testing_specs::paged(
                         make_spec(2, 4, 2, 1000, 777, 64, fp16, kCausalBr, Mode::fwd, bshd), 32)},
      // A softcap and sinks, with rows that see no key (the sink takes them whole).
      {"cuda.naive", mods(make_spec(1, 4, 4, 700, 300, 32, fp32, window(77)), 2, true)},
      {"cuda.naive", mods(make_spec(2, 4, 2, 1000, 777, 64, bf16, kCausalBr), 30, true)},
  };
  for (const Agreement& c : cases) {
    auto p = make(c.provider);
    if (!p) continue;  // cuDNN not built
    testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), c.spec, {.seed = 5});
    (void)pt.launch_and_read(engine());
    const Io& io = pt.tensors->io();
    auto* stream = static_cast<cudaStream_t>(engine().stream().native);
    const cuda::DeviceCheck kernel =
        cuda::run_device_check(c.spec, io, stream, cuda::DeviceCheckPath::kernels);
    // Its own budget (whole pairs per chunk), and one that leaves room for 37 query rows of one
    // pair: chunks of rows, the last one short.
    const Spec& sp = c.spec;
    const int64_t rows37 = 8 * sp.kv_len * (sp.head_dim + sp.dv() + 1) +
                           37 * 8 * (sp.kv_len + sp.head_dim + sp.dv() + 3);
    for (const int64_t budget : {int64_t{0}, rows37}) {
      const cuda::DeviceCheck gemm =
          cuda::run_device_check(c.spec, io, stream, cuda::DeviceCheckPath::gemm, budget);
      const std::string label = c.spec.label() + " budget " + std::to_string(budget);
      ASSERT_EQ(gemm.o.err2.size(), kernel.o.err2.size()) << label;
      for (size_t r = 0; r < kernel.o.err2.size(); ++r) {
        const auto near = [](double a, double b) {
          return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
        };
        ASSERT_TRUE(near(gemm.o.err2[r], kernel.o.err2[r])) << label << " row " << r;
        ASSERT_TRUE(near(gemm.o.ref2[r], kernel.o.ref2[r])) << label << " row " << r;
        ASSERT_TRUE(near(gemm.o.max_abs[r], kernel.o.max_abs[r])) << label << " row " << r;
        ASSERT_TRUE(near(gemm.o.floor[r], kernel.o.floor[r])) << label << " row " << r;
      }
      ASSERT_EQ(gemm.lse_err.size(), kernel.lse_err.size()) << label;
      for (size_t r = 0; r < kernel.lse_err.size(); ++r)
        ASSERT_NEAR(gemm.lse_err[r], kernel.lse_err[r], 1e-9) << label << " lse row " << r;
    }
  }
}

// Outputs never written: every element is NaN, in every mode; only the check's own kernels run
// (what compute-sanitizer runs: no library's kernels in the way).
TEST(DeviceVerify, FindsThePoisonAnywhereAndNamesIt) {
  REQUIRE_ENGINE();
  const InputFill fill{.seed = 3};
  for (Mode mode : {Mode::fwd, Mode::bwd, Mode::fwd_bwd}) {
    const Spec s = make_spec(2, 4, 2, 100, 77, 64, fp16, kCausalBr, mode, bshd);
    auto tensors = engine().allocate(s, true, fill);
    tensors->poison_outputs();
    const RowChecks c = engine().check_outputs(s, *tensors, fill, {}, false);
    const int64_t lse = mode == Mode::bwd ? 0 : s.batch * s.q_heads * s.q_len;
    const int64_t grads = mode == Mode::fwd ? 0 : s.q_elems() + s.k_elems() + s.v_elems();
    const int64_t o = mode == Mode::bwd ? 0 : s.o_elems();
    EXPECT_EQ(c.nonfinite, o + lse + grads) << s.label();
    EXPECT_EQ(c.first_nonfinite, mode == Mode::bwd ? "dq[0] (b=0, h=0, i=0, d=0) = nan"
                                                   : "o[0] (b=0, h=0, i=0, d=0) = nan");
    EXPECT_EQ(c.rows_checked, s.batch * s.q_heads * s.q_len);
    const VerifyResult v = judge_rows(s, c);
    EXPECT_FALSE(verify_passed(v));
    EXPECT_TRUE(std::isinf(v.rel_l2_err)) << v.detail;
  }
}

// The forward reference kept on the device (device_check_kept.hpp): the next check of the same
// inputs is served from it with the same sums to the bit, a wrong element is still caught and
// named from it, and other inputs (another seed), another spec or a forced path never use it.
TEST(DeviceVerify, TheKeptReferenceServesTheNextCheckAndNeverHidesAWrongOutput) {
  REQUIRE_ENGINE();
  auto p = make_cuda_naive();
  const Spec s = make_spec(2, 4, 2, 129, 200, 64, bf16, kCausalBr, Mode::fwd, bshd);
  auto* stream = static_cast<cudaStream_t>(engine().stream().native);
  const cuda::DeviceRows all{.all = true, .keep = {}};
  testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), s, {.seed = 41});
  (void)pt.launch_and_read(engine());
  const int64_t hits0 = cuda::kept_hits();
  const RowChecks first = cuda::check_on_device(s, pt.io(), stream, all);
  const RowChecks again = cuda::check_on_device(s, pt.io(), stream, all);
  EXPECT_EQ(cuda::kept_hits(), hits0 + 1);
  ASSERT_EQ(first.o.size(), again.o.size());
  for (size_t t = 0; t < first.o.size(); ++t) {
    EXPECT_EQ(first.o[t].err2, again.o[t].err2) << t;
    EXPECT_EQ(first.o[t].ref2, again.o[t].ref2) << t;
    EXPECT_EQ(first.o[t].max_abs, again.o[t].max_abs) << t;
    EXPECT_EQ(first.o[t].floor, again.o[t].floor) << t;
  }
  ASSERT_EQ(first.lse.size(), again.lse.size());
  for (size_t t = 0; t < first.lse.size(); ++t) EXPECT_EQ(first.lse[t], again.lse[t]) << t;
  expect_same_verdict(judge_rows(s, first), judge_rows(s, again), s.label());
  EXPECT_TRUE(verify_passed(judge_rows(s, again)));

  // One wrong element of O (2.0 in bf16): caught from the kept reference, its row named.
  const uint16_t two = 0x4000;
  auto* o = static_cast<unsigned char*>(pt.io().o.data);
  ASSERT_EQ(cudaMemcpy(o + pt.io().o.offset(1, 3, 77, 5) * 2, &two, 2, cudaMemcpyHostToDevice),
            cudaSuccess);
  const VerifyResult bad = judge_rows(s, cuda::check_on_device(s, pt.io(), stream, all));
  EXPECT_EQ(cuda::kept_hits(), hits0 + 2);
  EXPECT_FALSE(verify_passed(bad));
  EXPECT_NE(bad.detail.find("o row (b=1, h=3, i=77)"), std::string::npos) << bad.detail;

  // Other inputs of the same spec: computed afresh (no hit); then the first point's inputs are
  // no longer the kept ones, and its wrong element is caught by a fresh reference.
  testing_specs::OnePoint other = testing_specs::prepare_point(*p, engine(), s, {.seed = 42});
  (void)other.launch_and_read(engine());
  EXPECT_TRUE(verify_passed(judge_rows(s, cuda::check_on_device(s, other.io(), stream, all))));
  EXPECT_EQ(cuda::kept_hits(), hits0 + 2);
  EXPECT_FALSE(verify_passed(judge_rows(s, cuda::check_on_device(s, pt.io(), stream, all))));
  EXPECT_EQ(cuda::kept_hits(), hits0 + 2);
  // A forced path computes: the kept reference is not what a path test asks for.
  (void)cuda::run_device_check(s, other.io(), stream, cuda::DeviceCheckPath::kernels);
  EXPECT_EQ(cuda::kept_hits(), hits0 + 2);
}

// What the kept reference holds is given back to an allocation that fails for want of memory
// (device_buffer.hpp set_memory_reclaimer): an allocation of more than is free, but less than is
// free plus the kept rows, succeeds, and the next check computes its reference again.
TEST(DeviceVerify, AFailingAllocationGetsTheKeptReferencesMemory) {
  REQUIRE_ENGINE();
  const Spec s = make_spec(1, 32, 32, 16384, 1024, 128, fp16);  // kept rows: 549 MB
  const InputFill fill{.seed = 5};
  auto tensors = engine().allocate(s, false, fill);
  auto* stream = static_cast<cudaStream_t>(engine().stream().native);
  (void)cuda::check_on_device(s, tensors->io(), stream, {.all = false, .keep = {}});
  const int64_t hits0 = cuda::kept_hits();
  (void)cuda::check_on_device(s, tensors->io(), stream, {.all = false, .keep = {}});
  ASSERT_EQ(cuda::kept_hits(), hits0 + 1);  // kept
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  const int64_t ask = int64_t(free_bytes) + (int64_t{256} << 20);
  EXPECT_NO_THROW({ cuda::DeviceBuffer big(ask, nullptr); });
  (void)cuda::check_on_device(s, tensors->io(), stream, {.all = false, .keep = {}});
  EXPECT_EQ(cuda::kept_hits(), hits0 + 1);  // given back: computed again (and kept again)
}

TEST(DeviceVerify, HeadDimsBeyondSharedMemoryAreSaidToBe) {
  REQUIRE_ENGINE();
  EXPECT_EQ(
      cuda::device_check_unavailable(make_spec(1, 1, 1, 8, 8, 256, bf16, kNone, Mode::fwd_bwd)),
      "");
  const std::string why = cuda::device_check_unavailable(make_spec(1, 1, 1, 8, 8, 4096, fp32));
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
}

// ---------------------------------------------------------------------------------------------
// Mutation tests with the device check.

RunOptions quick_options() {
  RunOptions o = quick_run_options();
  o.verify.repeats = 10;  // the race damages one launch in ten
  return o;
}

std::vector<test::MutationCase> cases() {
  return {
      {make_spec(4, 16, 4, 3000, 3000, 64, bf16),
       {Mutation::dropped_tail_tile, Mutation::wrong_row, Mutation::wrong_pair,
        Mutation::swapped_kv_heads, Mutation::wrong_lse, Mutation::race, Mutation::row_off_5pct}},
      {make_spec(2, 16, 8, 5000, 5000, 128, fp16, kCausal),
       {Mutation::dropped_tail_tile, Mutation::wrong_row, Mutation::wrong_pair,
        Mutation::swapped_kv_heads, Mutation::diagonal_off_by_one, Mutation::wrong_lse,
        Mutation::race}},
      // No dropped_tail_tile here: at 12289 the partial key tile is one key, which only the last
      // query sees among 4096; its weight is within fp16's bound (the CPU test catches it in fp32).
      {make_spec(1, 8, 2, 12289, 12289, 64, fp16, window(4096), Mode::fwd, bshd),
       {Mutation::wrong_row, Mutation::wrong_pair, Mutation::swapped_kv_heads,
        Mutation::window_too_wide, Mutation::wrong_lse, Mutation::race}},
      {make_spec(2, 8, 2, 3000, 3000, 64, bf16, kCausal, Mode::bwd),
       {Mutation::wrong_dk_head, Mutation::race}},
      {make_spec(1, 8, 2, 5000, 5000, 64, fp16, kCausal, Mode::fwd_bwd),
       {Mutation::wrong_dk_head, Mutation::diagonal_off_by_one}},
  };
}

TEST(DeviceVerify, EveryMutationIsCaughtAndItsBasePasses) {
  REQUIRE_ENGINE();
  for (const test::MutationCase& c : cases()) {
    auto probe = test::make_mutant(Mutation::race, DeviceKind::cuda);
    if (Support s = probe->supports(c.spec, engine().device()); !s.ok) {
      ADD_FAILURE() << c.spec.label() << ": " << s.reason;  // the base must run these shapes
      continue;
    }
    const RunOptions o = quick_options();
    for (Mutation m : c.mutations) {
      auto mutant = test::make_mutant(m, DeviceKind::cuda);
      const Result r = run_point(c.spec, *mutant, engine(), o);
      EXPECT_EQ(r.status, Status::incorrect)
          << test::to_string(m) << " at " << c.spec.label() << ": " << r.reason;
      EXPECT_EQ(r.verify.sampling, "all (device)");
      EXPECT_EQ(r.verify.rows_checked, r.verify.rows_total);
    }
  }
}

// Of O and the LSE only the rows the verdict needs come back (device_check_pick.hpp): on every
// mutant's wrong outputs the verdict of those rows is the verdict of every row, to the worst row
// named, and the cross-checked rows are among them.
TEST(DeviceVerify, TheVerdictsRowsGiveTheVerdictOfEveryRow) {
  REQUIRE_ENGINE();
  auto* stream = static_cast<cudaStream_t>(engine().stream().native);
  const Spec shapes[] = {make_spec(2, 8, 2, 700, 700, 64, bf16),
                         make_spec(1, 8, 4, 1000, 1000, 128, fp16, kCausal),
                         make_spec(1, 4, 2, 1500, 1500, 64, fp16, window(300), Mode::fwd, bshd),
                         make_spec(1, 4, 2, 600, 600, 64, fp16, kCausal, Mode::fwd_bwd)};
  for (const Spec& s : shapes) {
    for (Mutation m : {Mutation::dropped_tail_tile, Mutation::wrong_row, Mutation::wrong_pair,
                       Mutation::swapped_kv_heads, Mutation::diagonal_off_by_one,
                       Mutation::wrong_lse, Mutation::window_too_wide, Mutation::wrong_dk_head}) {
      auto mutant = test::make_mutant(m, DeviceKind::cuda);
      if (!mutant->supports(s, engine().device()).ok) continue;
      const std::string label = std::string(test::to_string(m)) + " at " + s.label();
      testing_specs::OnePoint pt = testing_specs::prepare_point(*mutant, engine(), s, {.seed = 9});
      (void)pt.launch_and_read(engine());
      const RowChecks all = cuda::check_on_device(s, pt.io(), stream, {.all = true, .keep = {}});
      const std::vector<RowIndex> cross = cross_check_rows(s, 9);
      cuda::DeviceRows back{.all = false, .keep = {}};
      for (const RowIndex& r : cross) back.keep.push_back(flat_row(s, r));
      const RowChecks picked = cuda::check_on_device(s, pt.io(), stream, back);
      expect_same_verdict(judge_rows(s, picked), judge_rows(s, all), label);
      EXPECT_LE(picked.o.size(), back.keep.size() + 2) << label;
      for (const RowCheck& c : picked.o) {
        ASSERT_GE(c.row, 0);
        EXPECT_EQ(c.err2, all.o[size_t(c.row)].err2) << label << " row " << c.row;
        EXPECT_EQ(c.floor, all.o[size_t(c.row)].floor) << label << " row " << c.row;
      }
      for (int64_t k : back.keep) {
        EXPECT_TRUE(std::any_of(picked.o.begin(), picked.o.end(),
                                [&](const RowCheck& c) { return c.row == k; }))
            << label << " lacks kept row " << k;
      }
    }
  }
}

TEST(DeviceVerify, BasesPassWithEveryRowCheckedAndTheCostReported) {
  REQUIRE_ENGINE();
  for (const test::MutationCase& c : cases()) {
    auto base = make(c.spec.dtype == DType::fp32 ? "cuda.naive" : "cudnn.sdpa");
    if (!base) GTEST_SKIP() << "cuDNN not built";
    const Result r = run_point(c.spec, *base, engine(), quick_options());
    EXPECT_EQ(r.status, Status::passed) << c.spec.label() << ": " << r.reason;
    EXPECT_EQ(r.verify.sampling, "all (device)");
    EXPECT_EQ(r.verify.rows_checked, r.verify.rows_total);
    EXPECT_GE(r.verify.launches_checked, 2);
    EXPECT_GE(r.verify.reference_disagreement, 0.0);
    EXPECT_LT(r.verify.reference_disagreement, 1e-9);
    std::printf("[ verify   ] %s %s: %.3f s for %lld launches checked, worst rel %.3g\n",
                base->name().c_str(), c.spec.label().c_str(), r.verify.seconds,
                static_cast<long long>(r.verify.launches_checked), r.verify.rel_l2_err);
  }
}

}  // namespace
}  // namespace attnprof
