// cuda.naive, cuda.naive.expand and cuda.math (src/providers/cuda/) against the fp64 reference
// on random shapes, the mask-coverage test on the GPU, the NaN poison, memory accounting, and
// the host-side pieces (mask intervals, support reasons, byte estimates) that need no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/memory.hpp"
#include "attnprof/verify.hpp"
#include "engine_test_util.hpp"
#include "one_point.hpp"
#include "providers/cuda/softmax.cuh"
#include "providers/factories.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

// ---------------------------------------------------------------------------------------------
// Helpers

using testing::first_gpu;

#define REQUIRE_GPU(dev)                                   \
  std::string why_no_gpu;                                  \
  const std::optional<Device> dev = first_gpu(why_no_gpu); \
  if (!dev) GTEST_SKIP() << why_no_gpu

std::unique_ptr<Provider> make(const std::string& name) {
  if (name == "cuda.naive") return make_cuda_naive();
  if (name == "cuda.naive.expand") return make_cuda_naive_expand();
  return make_cuda_math();
}

const char* const kProviders[] = {"cuda.naive", "cuda.naive.expand", "cuda.math"};

// One engine for the whole suite (a CUDA context and its stream are expensive): its stream is
// non-blocking, so providers cannot rely on the legacy stream synchronizing with it.
cuda::CudaEngine& shared_engine() {
  static cuda::CudaEngine engine(0);
  return engine;
}

using testing_specs::make_spec;

Mask causal() {
  return {MaskKind::causal_tl, 0};
}
Mask causal_br() {
  return {MaskKind::causal_br, 0};
}
Mask window(int64_t w) {
  return {MaskKind::window, w};
}

bool all_nan(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isnan(x); });
}

// ---------------------------------------------------------------------------------------------
// Host-only: these run everywhere, GPU or not.

// RowMask (the softmax kernel's per-row interval) must be Mask::visible exactly.
TEST(CudaProviderPieces, RowMaskIsMaskVisible) {
  const Mask masks[] = {{}, causal(), causal_br(), window(1), window(3), window(64)};
  const int64_t shapes[][2] = {{1, 1}, {1, 9}, {9, 1}, {7, 7}, {5, 13}, {13, 5}, {70, 129}};
  for (const Mask& m : masks) {
    for (const auto& sh : shapes) {
      const int64_t nq = sh[0], nk = sh[1];
      const cuda::RowMask r = cuda::row_mask(m, nq, nk);
      for (int64_t i = 0; i < nq; ++i) {
        for (int64_t j = 0; j < nk; ++j) {
          const bool kernel = j >= r.first(i) && j <= r.last(i, nk);
          ASSERT_EQ(kernel, m.visible(i, j, nq, nk))
              << to_string(m) << " q_len " << nq << " kv_len " << nk << " i " << i << " j " << j;
        }
      }
    }
  }
}

// softmax_plan() (the softmax kernel's dispatch) must cover every key of a row with whole packs,
// in the shapes its kernels assume.
TEST(CudaProviderPieces, SoftmaxPlanCoversRows) {
  for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
    const int pack = static_cast<int>(16 / dtype_bytes(t));
    for (bool aligned : {true, false}) {
      for (int64_t nk = 1; nk <= 70000; nk += nk < 4200 ? 1 : 97) {
        const cuda::SoftmaxPlan p = cuda::softmax_plan(t, nk, aligned);
        const bool packed = aligned && nk % pack == 0;
        ASSERT_EQ(p.elems, packed ? pack : 1) << nk;
        ASSERT_GE(p.packs_per_thread, 1);
        const int64_t packs = nk / p.elems;
        if (p.warp) {
          ASSERT_TRUE(packed);
          ASSERT_LE(packs, cuda::kWarpRowPacks);
          ASSERT_TRUE(p.row_threads >= 1 && p.row_threads <= 32 &&
                      (p.row_threads & (p.row_threads - 1)) == 0);
          ASSERT_TRUE(p.row_threads == 32 || p.packs_per_thread == 1) << nk;
          ASSERT_GE(int64_t{p.row_threads} * p.packs_per_thread, packs) << nk;
          ASSERT_EQ(p.block_threads, cuda::kWarpBlockThreads);
          ASSERT_EQ(p.rows_per_block * p.row_threads, p.block_threads);
        } else {
          ASSERT_EQ(p.block_threads % 32, 0);
          ASSERT_TRUE(p.block_threads >= 32 && p.block_threads <= 1024);
          ASSERT_EQ(p.rows_per_block, 1);
          // Every row up to 32K keys (16K scalar) is held whole in registers.
          if (nk <= (packed ? 32768 : 16384)) {
            ASSERT_GE(int64_t{p.block_threads} * p.packs_per_thread, packs) << nk;
          }
        }
      }
    }
  }
}

TEST(CudaProviderPieces, SupportsSaysWhyNot) {
  Device gpu;
  gpu.kind = DeviceKind::cuda;
  gpu.name = "test GPU";
  gpu.cc_major = 9;
  Device old_gpu = gpu;
  old_gpu.cc_major = 7;
  const Device cpu;  // kind cpu
  for (const char* name : kProviders) {
    const auto p = make(name);
    EXPECT_EQ(p->name(), name);
    EXPECT_EQ(p->device_kind(), DeviceKind::cuda);
    EXPECT_EQ(p->index_bits(), 63);
    Spec s = make_spec(1, 4, 2, 64, 64, 64, DType::bf16, causal());
    EXPECT_TRUE(p->supports(s, gpu).ok) << p->supports(s, gpu).reason;
    s.layout = Layout::bshd;
    EXPECT_TRUE(p->supports(s, gpu).ok) << p->supports(s, gpu).reason;
    for (Mode mode : {Mode::bwd, Mode::fwd_bwd}) {
      s.mode = mode;
      const Support no = p->supports(s, gpu);
      EXPECT_FALSE(no.ok) << name;
      EXPECT_NE(no.reason.find("forward only"), std::string::npos) << no.reason;
    }
    s.mode = Mode::fwd;
    EXPECT_FALSE(p->supports(s, cpu).ok);
    const Support old = p->supports(s, old_gpu);
    EXPECT_FALSE(old.ok);
    EXPECT_NE(old.reason.find("8.0"), std::string::npos) << old.reason;
    // 2^62 scores: S alone would pass 2^63 bytes.
    const Spec huge = make_spec(int64_t{1} << 16, 64, 64, int64_t{1} << 20, int64_t{1} << 20, 64,
                                DType::fp16, Mask{});
    EXPECT_FALSE(p->supports(huge, gpu).ok);
  }
}

// workspace_estimate() is the runs' allocation beyond the harness's tensors, counted here from
// the recipe independently.
TEST(CudaProviderPieces, EstimatesCountEveryBuffer) {
  const int64_t b = 2, hq = 8, hkv = 2, nq = 300, nk = 500, d = 64, dv = 32;
  const Spec s =
      make_spec(b, hq, hkv, nq, nk, d, DType::fp16, causal(), Mode::fwd, Layout::bhsd, dv);
  const int64_t scores = b * hq * nq * nk;  // elements, of S and of P
  const int64_t cublas = int64_t{32} << 20;
  const int64_t expanded = b * hq * nk * (d + dv);  // K and V at the query heads
  EXPECT_EQ(make_cuda_naive()->workspace_estimate(s), 2 * 2 * scores + cublas);
  EXPECT_EQ(make_cuda_naive_expand()->workspace_estimate(s),
            2 * 2 * scores + 2 * expanded + cublas);
  // math: fp32 Q, K, V, O copies; scaled Q; expanded K, V; scaled K; S and P in fp32.
  const int64_t f32 =
      4 * (b * hq * nq * d + b * hkv * nk * d + b * hkv * nk * dv + b * hq * nq * dv +
           b * hq * nq * d + expanded + b * hq * nk * d + 2 * scores);
  EXPECT_EQ(make_cuda_math()->workspace_estimate(s), f32 + cublas);
  // bshd adds the six per-(batch, head) pointer arrays of the batched GEMMs to cuda.naive.
  Spec t = s;
  t.layout = Layout::bshd;
  EXPECT_EQ(make_cuda_naive()->workspace_estimate(t), 2 * 2 * scores + cublas + 6 * b * hq * 8);
}

// ---------------------------------------------------------------------------------------------
// On the GPU: every provider against the fp64 reference.

struct Case {
  std::string provider;
  Spec spec;
};

std::string case_name(const Case& c) {
  const Spec& s = c.spec;
  std::string n = c.provider + "_" + std::string(to_string(s.dtype)) + "_" + to_string(s.mask) +
                  "_b" + std::to_string(s.batch) + "h" + std::to_string(s.q_heads) + "g" +
                  std::to_string(s.group_size()) + "_q" + std::to_string(s.q_len) + "k" +
                  std::to_string(s.kv_len) + "d" + std::to_string(s.head_dim) +
                  (s.v_head_dim ? "v" + std::to_string(s.v_head_dim) : "") + "_" +
                  std::string(to_string(s.layout)) +
                  (s.paged() ? "_paged" + std::to_string(s.page_size) : "");
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// ~60 points: every (provider, dtype, mask) at q_len == kv_len, lengths and GQA ratios rotated
// so that each provider sees every length, ratio and both layouts; then the shapes where masks
// and indexing break: q_len < kv_len (causal-br, decode, windows), q_len > kv_len (top-left
// causal; bottom-right masks there leave rows with no key, which Spec::validate rejects),
// Dv != D, windows wider than the keys, head sizes that are no multiple of 16 bytes.
std::vector<Case> reference_cases() {
  const int64_t lengths[] = {1, 17, 129, 1000, 4097};
  const int64_t ratios[] = {1, 4, 8};
  const int64_t dims[] = {64, 128, 32};
  const DType dtypes[] = {DType::fp32, DType::fp16, DType::bf16};
  std::vector<Case> out;
  for (int p = 0; p < 3; ++p) {
    for (int t = 0; t < 3; ++t) {
      for (int m = 0; m < 4; ++m) {
        const int idx = p * 12 + t * 4 + m;
        const int64_t n = lengths[idx % 5];
        const int64_t g = ratios[(idx / 5) % 3];
        const int64_t kv_heads = n >= 1000 ? 1 : 1 + idx % 2;  // keep N x N buffers small
        const int64_t batch = n >= 1000 ? 1 : 1 + (idx / 2) % 2;
        const Layout layout = idx % 2 ? Layout::bshd : Layout::bhsd;
        const Mask masks[] = {Mask{}, causal(), causal_br(), window(std::max<int64_t>(1, n / 4))};
        // causal-br is the bottom-right alignment of a shorter query block against its keys
        const int64_t nq = m == 2 ? std::max<int64_t>(1, n / 3) : n;
        out.push_back({kProviders[p], make_spec(batch, kv_heads * g, kv_heads, nq, n, dims[idx % 3],
                                                dtypes[t], masks[m], Mode::fwd, layout)});
      }
    }
  }
  for (const char* p : kProviders) {
    const std::string name = p;
    // decode: one query token against a long GQA cache
    out.push_back({name, make_spec(2, 16, 2, 1, 4097, 128, DType::bf16, causal_br())});
    // chunked prefill: a query block at the end of a longer cache
    out.push_back({name, make_spec(1, 8, 2, 129, 1000, 64, DType::fp16, causal_br(), Mode::fwd,
                                   Layout::bshd)});
    // more queries than keys (top-left causal: the last rows see every key), and a window
    // over a short query block at the end of its keys
    out.push_back({name, make_spec(1, 4, 1, 129, 17, 64, DType::fp32, causal())});
    out.push_back(
        {name, make_spec(2, 4, 4, 17, 129, 64, DType::fp16, window(5), Mode::fwd, Layout::bshd)});
    // Dv != D, window wider than the keys, a head size that is no multiple of 16 bytes' worth
    out.push_back({name, make_spec(2, 8, 1, 17, 129, 64, DType::bf16, window(1000), Mode::fwd,
                                   Layout::bhsd, 32)});
    out.push_back(
        {name, make_spec(1, 8, 2, 129, 129, 36, DType::fp16, window(1), Mode::fwd, Layout::bshd)});
    out.push_back({name, make_spec(1, 4, 4, 1000, 1000, 128, DType::fp32, Mask{}, Mode::fwd,
                                   Layout::bshd, 64)});
    // rows of whole 16-byte packs longer than the warp kernel takes (the block kernel's cached
    // path), and rows past what it caches (32K keys: the rest re-read)
    out.push_back({name, make_spec(1, 2, 1, 96, 2048, 64, DType::bf16, causal_br())});
    out.push_back({name, make_spec(1, 1, 1, 9, 4096, 32, DType::fp32, window(3000))});
    out.push_back({name, make_spec(1, 1, 1, 3, 40960, 32, DType::fp16, Mask{})});
  }
  // A paged cache (gathered first): decode, and a prefill chunk whose last page is partial, in
  // both layouts; the table scatters the pages and their tails are NaN.
  for (const char* name : {"cuda.naive", "cuda.naive.expand"}) {
    out.push_back({name, testing_specs::paged(
                             make_spec(2, 16, 2, 1, 4097, 128, DType::bf16, causal_br()), 16)});
    out.push_back({name, testing_specs::paged(make_spec(1, 8, 2, 129, 1000, 64, DType::fp16,
                                                        causal_br(), Mode::fwd, Layout::bshd),
                                              64)});
    out.push_back({name, testing_specs::paged(make_spec(2, 4, 1, 17, 37, 40, DType::fp32, Mask{},
                                                        Mode::fwd, Layout::bhsd, 24),
                                              1)});
  }
  return out;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << case_name(c);
}

class CudaProviderReference : public ::testing::TestWithParam<Case> {};

TEST_P(CudaProviderReference, MatchesFp64Reference) {
  REQUIRE_GPU(gpu);
  const Case& c = GetParam();
  ASSERT_TRUE(c.spec.validate().empty()) << c.spec.validate().front();
  const auto provider = make(c.provider);
  ASSERT_TRUE(provider->availability().available) << provider->availability().reason;
  const Support sup = provider->supports(c.spec, *gpu);
  ASSERT_TRUE(sup.ok) << sup.reason;

  cuda::CudaEngine& engine = shared_engine();
  MemoryTracker& tracker = *engine.tracker();
  const int64_t base = tracker.current();
  tracker.reset_peak();
  const InputFill fill{0x5EED0000u + std::hash<std::string>{}(case_name(c)) % 1000};
  {
    testing_specs::OnePoint pt = testing_specs::prepare_point(*provider, engine, c.spec, fill);
    // Memory: every allocation is tracked, and the estimate is what the run allocated.
    EXPECT_EQ(tracker.peak() - base, pt.tensors->bytes() + pt.run->workspace_bytes());
    EXPECT_EQ(provider->workspace_estimate(c.spec), pt.run->workspace_bytes());
    EXPECT_GT(pt.run->workspace_bytes(), 0);

    // The poison reaches every element, and the launch overwrites every element.
    pt.tensors->poison_outputs();
    ASSERT_TRUE(all_nan(pt.tensors->read_outputs().o));
    const HostOutputs first = pt.launch_and_read(engine);
    const VerifyResult v = verify_outputs(c.spec, fill, first);
    EXPECT_EQ(v.nan_count, 0) << v.detail;
    EXPECT_TRUE(verify_passed(v)) << "rel_l2_err " << v.rel_l2_err << " > " << v.tolerance << " ("
                                  << v.sampling << ", " << v.rows_checked << " rows): " << v.detail;

    // A second launch over fresh poison computes the same bits (no read of unwritten memory,
    // no race between the steps).
    const HostOutputs second = pt.launch_and_read(engine);
    ASSERT_EQ(first.o.size(), second.o.size());
    size_t differ = 0;
    for (size_t e = 0; e < first.o.size(); ++e)
      differ += std::memcmp(&first.o[e], &second.o[e], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0u) << "elements that changed between two launches";
    // launch allocates nothing
    EXPECT_EQ(tracker.peak() - base, pt.tensors->bytes() + pt.run->workspace_bytes());
  }
  EXPECT_EQ(tracker.current(), base);  // the run and the tensors freed all they took
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaProviderReference, ::testing::ValuesIn(reference_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return case_name(i.param);
                         });

// ---------------------------------------------------------------------------------------------
// The mask-coverage test (docs/method.md, "Verification"): Q = 0 makes every visible key's weight
// equal, V encodes the key index, so each output is the mean of the encoding over exactly the
// visible keys (computed here from Mask::visible, 0 for a row that sees none). A mask one key
// off moves the mean by about (v_j - mean) / count, far above fp32 and fp16 rounding at these
// lengths.

std::vector<Case> coverage_cases() {
  std::vector<Case> out;
  for (const char* p : kProviders) {
    const std::string name = p;
    for (const Mask& m : {Mask{}, causal(), causal_br(), window(1), window(5), window(64)}) {
      out.push_back({name, make_spec(1, 4, 1, 129, 129, 64, DType::fp32, m)});
    }
    out.push_back({name, make_spec(1, 4, 2, 37, 200, 64, DType::fp32, causal_br())});
    out.push_back({name, make_spec(1, 4, 2, 200, 37, 64, DType::fp32, causal())});
    out.push_back(
        {name, make_spec(2, 8, 1, 300, 300, 64, DType::fp16, causal(), Mode::fwd, Layout::bshd)});
    out.push_back({name, make_spec(1, 8, 2, 100, 257, 32, DType::fp16, window(17))});
    out.push_back({name, make_spec(1, 4, 4, 65, 1000, 64, DType::bf16, causal_br(), Mode::fwd,
                                   Layout::bshd)});
  }
  return out;
}

class CudaProviderMaskCoverage : public ::testing::TestWithParam<Case> {};

TEST_P(CudaProviderMaskCoverage, OutputIsMeanOfVisibleKeys) {
  REQUIRE_GPU(gpu);
  const Case& c = GetParam();
  const Spec& s = c.spec;
  ASSERT_TRUE(s.validate().empty()) << s.validate().front();
  const auto provider = make(c.provider);
  const InputFill ctx{7, InputPattern::mask_coverage};
  const std::vector<float> o = testing_specs::run_once(*provider, shared_engine(), s, ctx).o;
  ASSERT_EQ(static_cast<int64_t>(o.size()), s.o_elems());

  // Rounding of 1/count and of O itself: fp32 ~1e-6, fp16 ~1e-3, bf16 ~8e-3 relative.
  const double rel = s.dtype == DType::fp32 ? 2e-5 : s.dtype == DType::fp16 ? 2e-3 : 1.6e-2;
  const int64_t dv = s.dv();
  int64_t bad = 0;
  std::string first_bad;
  std::vector<double> expected(static_cast<size_t>(dv));
  for (int64_t i = 0; i < s.q_len; ++i) {
    std::fill(expected.begin(), expected.end(), 0.0);
    int64_t count = 0;
    for (int64_t j = 0; j < s.kv_len; ++j) {
      if (!s.mask.visible(i, j, s.q_len, s.kv_len)) continue;
      ++count;
      for (int64_t d = 0; d < dv; ++d) {
        expected[static_cast<size_t>(d)] += input_value(
            InputPattern::mask_coverage, ctx.seed, TensorId::v, 0, static_cast<int>(s.dtype), j, d);
      }
    }
    if (count > 0)
      for (double& x : expected) x /= static_cast<double>(count);
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t h = 0; h < s.q_heads; ++h) {
        for (int64_t d = 0; d < dv; ++d) {
          const int64_t idx = s.layout == Layout::bhsd
                                  ? ((b * s.q_heads + h) * s.q_len + i) * dv + d
                                  : ((b * s.q_len + i) * s.q_heads + h) * dv + d;
          const double want = expected[static_cast<size_t>(d)];
          const double got = o[static_cast<size_t>(idx)];
          if (!(std::abs(got - want) <= rel * (1.0 + std::abs(want)))) {
            if (bad++ == 0) {
              first_bad = "b " + std::to_string(b) + " h " + std::to_string(h) + " i " +
                          std::to_string(i) + " d " + std::to_string(d) + ": got " +
                          std::to_string(got) + ", want " + std::to_string(want) + " over " +
                          std::to_string(count) + " visible keys";
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << "first: " << first_bad;
}

// The cases above are problems the verifier accepts (a test of an invalid spec proves nothing).
TEST(CudaProviderPieces, TestCasesAreValidSpecs) {
  std::vector<Case> all = reference_cases();
  const std::vector<Case> more = coverage_cases();
  all.insert(all.end(), more.begin(), more.end());
  EXPECT_GE(all.size(), 80u);
  for (const Case& c : all) {
    const std::vector<std::string> problems = c.spec.validate();
    EXPECT_TRUE(problems.empty()) << case_name(c) << ": " << problems.front();
  }
}

INSTANTIATE_TEST_SUITE_P(Masks, CudaProviderMaskCoverage, ::testing::ValuesIn(coverage_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return case_name(i.param);
                         });

// GQA expansion is what cuda.naive.expand adds over cuda.naive: K and V at the query heads.
TEST(CudaProviderMemory, ExpandHoldsTheRepeatedKv) {
  REQUIRE_GPU(gpu);
  const Spec s = make_spec(2, 8, 2, 64, 256, 64, DType::bf16, causal());
  auto naive = testing_specs::prepare_point(*make_cuda_naive(), shared_engine(), s, {});
  auto expand = testing_specs::prepare_point(*make_cuda_naive_expand(), shared_engine(), s, {});
  EXPECT_EQ(expand.run->workspace_bytes() - naive.run->workspace_bytes(),
            2 * int64_t{2} * s.batch * s.q_heads * s.kv_len * s.head_dim);
}

}  // namespace
}  // namespace attnprof
