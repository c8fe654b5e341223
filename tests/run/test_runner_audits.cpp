// What a provider cannot fake (docs/method.md): the harness's audits turn a lazy, memoizing,
// input-writing or out-of-bounds provider into the row that says what it did, at whatever point
// of the lifecycle it starts cheating. Cheats wrap cpu.reference's correct run on the CPU engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "attnprof/digest.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "wrapped_provider.hpp"

namespace attnprof {
namespace {

enum class Cheat {
  none,
  lazy_after_first,      // computes on its first launch only
  lazy_after_verified,   // computes on its first two launches (the verified one, the warm-up)
  memoize,               // computes once, copies the kept O on every later launch
  zero_q_from_second,    // zeroes Q in place from its second launch on
  reverse_q_each,        // reverses Q in place on every launch: back after two
  toggle_q_from_second,  // negates Q from its second launch on: back every other launch
  scale_k_in_prepare,    // halves K once, in prepare
  past_end_of_o,         // writes 4 bytes past O's end
  past_end_of_q,         // writes 4 bytes past Q's end (an input's guard)
};

class CheatRun final : public test::WrappedRun {
 public:
  CheatRun(std::unique_ptr<Run> inner, Cheat c) : WrappedRun(std::move(inner)), cheat_(c) {}
  void launch(Stream& s, const Io& io) override {
    ++launches_;
    float* q = io.q.as<float>();
    const auto nq = static_cast<size_t>(io.q.elems());
    if (cheat_ == Cheat::zero_q_from_second && launches_ > 1) std::fill_n(q, nq, 0.0f);
    if (cheat_ == Cheat::reverse_q_each) std::reverse(q, q + nq);
    if (cheat_ == Cheat::toggle_q_from_second && launches_ > 1) {
      for (size_t i = 0; i < nq; ++i) q[i] = -q[i];
    }
    const bool lazy = (cheat_ == Cheat::lazy_after_first && launches_ > 1) ||
                      (cheat_ == Cheat::lazy_after_verified && launches_ > 2);
    if (lazy) return;
    const TensorView* outs[] = {&io.o, &io.lse, &io.dq, &io.dk, &io.dv};
    if (cheat_ == Cheat::memoize && !kept_.empty()) {
      for (size_t i = 0; i < kept_.size(); ++i)
        std::copy(kept_[i].begin(), kept_[i].end(), outs[i]->as<float>());
      return;
    }
    WrappedRun::launch(s, io);
    if (cheat_ == Cheat::memoize) {
      for (const TensorView* t : outs) {
        const float* p = t->present() ? t->as<const float>() : nullptr;
        kept_.emplace_back(p, p + (p ? t->elems() : 0));
      }
    }
    const float junk = 1.0f;
    if (cheat_ == Cheat::past_end_of_o) std::memcpy(io.o.as<float>() + io.o.elems(), &junk, 4);
    if (cheat_ == Cheat::past_end_of_q) std::memcpy(q + nq, &junk, 4);
  }

 private:
  Cheat cheat_;
  int launches_ = 0;
  std::vector<std::vector<float>> kept_;  // o, lse, dq, dk, dv as the first launch wrote them
};

class CheatProvider final : public test::WrappedProvider {
 public:
  explicit CheatProvider(Cheat c)
      : WrappedProvider("cpu.reference", "test.cheat." + std::to_string(int(c)),
                        "cpu.reference, cheating"),
        cheat_(c) {}

 private:
  std::unique_ptr<Run> wrap(std::unique_ptr<Run> inner, const Io& io) override {
    if (cheat_ == Cheat::scale_k_in_prepare) {
      float* k = io.k.as<float>();
      for (int64_t i = 0; i < io.k.elems(); ++i) k[i] *= 0.5f;
    }
    return std::make_unique<CheatRun>(std::move(inner), cheat_);
  }
  Cheat cheat_;
};

Spec small(Mode mode = Mode::fwd) {
  return {.batch = 1,
          .q_heads = 2,
          .kv_heads = 1,
          .q_len = 24,
          .kv_len = 40,
          .head_dim = 16,
          .dtype = DType::fp32,
          .mask = {MaskKind::causal_br, 0},
          .mode = mode};
}

RunOptions quick() {
  RunOptions o;
  o.measure.rule.min_time_s = 0.001;
  o.measure.rule.timeout_s = 0.05;
  o.measure.rule.min_samples = 3;
  return o;
}

Result run_cheat(Cheat c, const Spec& spec = small()) {
  CheatProvider p(c);
  auto engine = make_cpu_engine(1);
  return run_point(spec, p, *engine, quick());
}

void expect(const Result& r, Status status, Fault fault, const std::string& in_reason) {
  EXPECT_EQ(r.status, status) << r.reason;
  EXPECT_EQ(r.fault, fault) << to_string(r.fault) << ": " << r.reason;
  EXPECT_NE(r.reason.find(in_reason), std::string::npos) << r.reason;
  EXPECT_EQ(r.tflops, 0) << "a row that did not pass carries no figures";
}

TEST(RunnerAudits, AnHonestProviderPasses) {
  const Result r = run_cheat(Cheat::none);
  EXPECT_EQ(r.status, Status::passed) << r.reason;
  EXPECT_GE(r.verify.launches_checked, 3);  // verified, last timed, new inputs (and parity)
}

TEST(RunnerAudits, ALazyProviderLeavesTheFirstTimedSamplesPoisonUnwritten) {
  expect(run_cheat(Cheat::lazy_after_first), Status::incorrect, Fault::unwritten, "timed sample 1");
  expect(run_cheat(Cheat::lazy_after_verified), Status::incorrect, Fault::unwritten,
         "timed sample 1");
}

TEST(RunnerAudits, AMemoizedOutputDoesNotFollowNewInputs) {
  // One key per query: the copy of the kept output costs about what the attention does, so no
  // ceiling is broken and only the launch on new input values can see the memo.
  RunOptions o = quick();
  o.auto_peaks = AutoPeaks::any;
  Spec s = small();
  s.kv_len = 1;
  s.mask = {MaskKind::none, 0};
  CheatProvider p(Cheat::memoize);
  auto engine = make_cpu_engine(1);
  expect(run_point(s, p, *engine, o), Status::incorrect, Fault::stale, "new input values");
  // In mode fwd_bwd too (O and the gradients of new inputs).
  s.mode = Mode::fwd_bwd;
  CheatProvider p2(Cheat::memoize);
  expect(run_point(s, p2, *engine, o), Status::incorrect, Fault::stale, "new input values");
}

TEST(RunnerAudits, AMemoizedComputeBoundPointIsFasterThanTheDeviceCan) {
  // 67 MFLOP answered by a 128 KiB copy: far above the CPU's measured ceiling (3x its sgemm).
  RunOptions o = quick();
  o.auto_peaks = AutoPeaks::any;
  Spec s = small();
  s.q_len = s.kv_len = 256;
  s.head_dim = 64;
  s.mask = {MaskKind::none, 0};
  CheatProvider p(Cheat::memoize);
  auto engine = make_cpu_engine(1);
  expect(run_point(s, p, *engine, o), Status::incorrect, Fault::implausible,
         "more than this device can compute");
}

TEST(RunnerAudits, AnInputWrittenInPlaceIsNamed) {
  expect(run_cheat(Cheat::zero_q_from_second), Status::failed, Fault::modified_inputs, "input q");
  expect(run_cheat(Cheat::reverse_q_each), Status::failed, Fault::modified_inputs,
         "after the verified launch");
  expect(run_cheat(Cheat::scale_k_in_prepare), Status::failed, Fault::modified_inputs,
         "input k (seen after prepare)");
}

TEST(RunnerAudits, AWriteThatUndoesItselfOverTwoLaunchesIsSeenAtTheOtherParity) {
  // Q is back after every even launch: the verified launch is launch 1 (unchanged), and the
  // timed phase may end on an even count; one more launch after the checks changes the parity.
  expect(run_cheat(Cheat::toggle_q_from_second), Status::failed, Fault::modified_inputs, "q");
}

TEST(RunnerAudits, AWritePastTheEndOfATensorIsOutOfBounds) {
  expect(run_cheat(Cheat::past_end_of_o), Status::failed, Fault::out_of_bounds,
         "past the end of o");
  expect(run_cheat(Cheat::past_end_of_q), Status::failed, Fault::out_of_bounds,
         "past the end of q");
}

TEST(RunnerAudits, ModeBwdTakesTheForwardStateAsAnInput) {
  Spec s = small(Mode::bwd);
  s.mask = {MaskKind::none, 0};
  CheatProvider honest(Cheat::none);
  auto engine = make_cpu_engine(1);
  const Result r = run_point(s, honest, *engine, quick());
  EXPECT_EQ(r.status, Status::passed) << r.reason;
  expect(run_cheat(Cheat::zero_q_from_second, s), Status::failed, Fault::modified_inputs, "q");
}

TEST(Digest, SeesAChangedOrMovedWordAndMatchesForEqualBytes) {
  std::vector<unsigned char> a(1000), b(1000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = b[i] = static_cast<unsigned char>(i * 7);
  EXPECT_EQ(digest_host(a.data(), 1000), digest_host(b.data(), 1000));
  b[999] ^= 1;  // in the zero-padded last word
  EXPECT_NE(digest_host(a.data(), 1000), digest_host(b.data(), 1000));
  b[999] ^= 1;
  std::swap_ranges(b.begin(), b.begin() + 8, b.begin() + 8);  // two words swap places
  EXPECT_NE(digest_host(a.data(), 1000), digest_host(b.data(), 1000));
  EXPECT_NE(digest_host(a.data(), 1000, 1), digest_host(a.data(), 1000, 2));  // the salt
}

}  // namespace
}  // namespace attnprof
