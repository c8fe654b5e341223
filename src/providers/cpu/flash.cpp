// cpu.flash: FlashAttention's forward on the CPU, in fp32. Each work item is one tile of
// kTileQ queries of one (batch, head); it walks the key tiles its rows can see (fully masked
// tiles are never touched), computes the kTileQ x kTileK score tile with cblas_sgemm, updates
// the running row maximum and sum (online softmax), rescales the output rows, and adds P V with
// a second sgemm straight into O. The N x N score matrix is never materialized: scratch is one
// score tile per thread, so extra memory is linear in the thread count and constant in N.
// OpenMP over (batch, head, query tile). Native GQA. Forward only.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "cpu_run.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

// Tile sizes: a 64 x 256 fp32 score tile is 64 KiB and stays in L2 between the QK^T sgemm,
// the softmax pass and the PV sgemm; 256 keys make the sgemm calls long enough that OpenBLAS's
// per-call packing is amortized.
constexpr int64_t kTileQ = 64;
constexpr int64_t kTileK = 256;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// exp(x) for x in [-87, 0], fp32, written so the compiler vectorizes it (std::exp is a libm
// call per element, about a third of this kernel's time). Cody-Waite reduction x = n ln2 + r
// with |r| <= ln2/2, Cephes' degree-6 minimax polynomial for e^r (about 1 ulp), and 2^n built
// in the exponent bits. The caller clamps x to [-87, 0]: below -87 the result is ~1e-38 instead
// of smaller, an absolute error far below the fp32 resolution of a row sum that is >= 1.
[[gnu::always_inline]] inline float exp_clamped(float x) {
  const float t = x * 1.44269504088896341f;                     // x / ln 2
  const float n = (t + 12582912.0f) - 12582912.0f;              // round to nearest (1.5 * 2^23)
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // x - n ln2, in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n, n in [-126, 0]
  return er * std::bit_cast<float>(bits);
}

// The hot loops of the online softmax, compiled for AVX2+FMA (x86-64-v3) and for baseline
// x86-64 and picked at load time: the build targets baseline x86-64.
[[gnu::target_clones("arch=x86-64-v3", "default")]] float row_max(const float* s, int64_t n,
                                                                  float init) {
  float m = init;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j) m = s[j] > m ? s[j] : m;  // std::max form does not vectorize
  return m;
}

// s[j] = exp(s[j] - mx) in place; returns the sum. The clamp has its own loop: inside the exp
// loop GCC turns it into a branch and gives up vectorizing.
[[gnu::target_clones("arch=x86-64-v3", "default")]] float exp_and_sum(float* s, int64_t n,
                                                                      float mx) {
  for (int64_t j = 0; j < n; ++j) s[j] = std::max(s[j] - mx, -87.0f);
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    const float p = exp_clamped(s[j]);
    s[j] = p;
    sum += p;
  }
  return sum;
}

// Per-thread scratch of one work item.
struct Scratch {
  std::vector<float> s;         // kTileQ x kTileK scores, then probabilities
  std::vector<float> m, l;      // running row max and row sum (kTileQ each)
  std::vector<int64_t> lo, hi;  // visible key interval of each row (clamped)
  static int64_t bytes() {
    return (kTileQ * kTileK + 2 * kTileQ) * int64_t{sizeof(float)} +
           2 * kTileQ * int64_t{sizeof(int64_t)};
  }
};

class FlashRun final : public cpu::CpuRun {
 public:
  FlashRun(const Spec& spec, const PrepareContext& ctx) : CpuRun(spec, ctx) {
    cpu::use_single_threaded_blas();
    q_tiles_ = (spec.q_len + kTileQ - 1) / kTileQ;
    workers_ = cpu::cpu_threads(threads_, spec.batch * spec.q_heads * q_tiles_);
    scratch_.resize(static_cast<size_t>(workers_));
    for (Scratch& s : scratch_) {
      s.s.resize(kTileQ * kTileK);
      s.m.resize(kTileQ);
      s.l.resize(kTileQ);
      s.lo.resize(kTileQ);
      s.hi.resize(kTileQ);
    }
    add_workspace(workers_ * Scratch::bytes());
  }

  void launch(Stream&, const Io& io) override {
    const int64_t items = spec_.batch * spec_.q_heads * q_tiles_;
    // Dynamic: under causal masks the last query tiles see many more keys than the first.
#pragma omp parallel for num_threads(workers_) schedule(dynamic, 1)
    for (int64_t it = 0; it < items; ++it) {
      const int64_t bh = it / q_tiles_;
      tile(io, bh / spec_.q_heads, bh % spec_.q_heads, (it % q_tiles_) * kTileQ,
           scratch_[static_cast<size_t>(omp_get_thread_num())]);
    }
  }

 private:
  void tile(const Io& io, int64_t b, int64_t h, int64_t r0, Scratch& sc) {
    const Spec& sp = spec_;
    const int64_t kvh = h / sp.group_size();
    // A ragged batch's sequence: its lengths (io.seq_q, seq_kv); tiles past its rows do nothing.
    const cpu::SeqDims n = cpu::seq_dims(sp, io, b);
    const int64_t d = sp.head_dim, dv = sp.dv(), nq = n.nq, nk = n.nk;
    if (r0 >= nq) return;
    const int64_t nr = std::min(kTileQ, nq - r0);
    const float* q = io.q.as<float>() + io.q.offset(b, h, r0);
    const float* k = io.k.as<float>() + io.k.offset(b, kvh, 0);
    const float* v = io.v.as<float>() + io.v.offset(b, kvh, 0);
    const int64_t q_stride = io.q.stride_s(), k_stride = io.k.stride_s();
    const int64_t v_stride = io.v.stride_s(), o_stride = io.o.stride_s();
    float* o = io.o.as<float>() + io.o.offset(b, h, r0);

    // Visible interval per row; the tile's key range is their union (one interval, since both
    // ends are nondecreasing in the query index), so no fully masked key tile is visited.
    int64_t k_first = nk, k_last = -1;
    for (int64_t r = 0; r < nr; ++r) {
      sc.lo[size_t(r)] = std::max<int64_t>(0, sp.mask.first_visible(r0 + r, nq, nk));
      sc.hi[size_t(r)] = std::min<int64_t>(nk - 1, sp.mask.last_visible(r0 + r, nq, nk));
      if (sc.lo[size_t(r)] <= sc.hi[size_t(r)]) {
        k_first = std::min(k_first, sc.lo[size_t(r)]);
        k_last = std::max(k_last, sc.hi[size_t(r)]);
      }
      sc.m[size_t(r)] = kNegInf;
      sc.l[size_t(r)] = 0.0f;
      std::fill(o + r * o_stride, o + r * o_stride + dv, 0.0f);
    }

    const float scale = static_cast<float>(sp.softmax_scale());
    for (int64_t kt = k_first; kt <= k_last; kt += kTileK) {
      const int64_t nc = std::min(kTileK, k_last + 1 - kt);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(nr), int(nc), int(d), scale, q,
                  int(q_stride), k + kt * k_stride, int(k_stride), 0.0f, sc.s.data(), int(kTileK));
      for (int64_t r = 0; r < nr; ++r) online_softmax_row(sc, r, kt, nc, o + r * o_stride, dv);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(nr), int(dv), int(nc), 1.0f,
                  sc.s.data(), int(kTileK), v + kt * v_stride, int(v_stride), 1.0f, o,
                  int(o_stride));
    }

    for (int64_t r = 0; r < nr; ++r) {
      const float l = sc.l[size_t(r)];
      float* orow = o + r * o_stride;
      float& lse = io.lse.as<float>()[io.lse.offset(b, h, r0 + r)];
      if (l == 0.0f) {  // no visible key: o stays 0, lse = -inf (reference.hpp's convention)
        lse = kNegInf;
        continue;
      }
      const float inv = 1.0f / l;
      for (int64_t c = 0; c < dv; ++c) orow[c] *= inv;
      lse = sc.m[size_t(r)] + std::log(l);
    }
  }

  // One row of the score tile (keys kt .. kt+nc-1) becomes unnormalized probabilities
  // exp(s - m_new); the row's running sum and its output row are rescaled by exp(m_old - m_new).
  // Keys outside the row's visible interval get probability 0.
  static void online_softmax_row(Scratch& sc, int64_t r, int64_t kt, int64_t nc, float* orow,
                                 int64_t dv) {
    float* s = sc.s.data() + r * kTileK;
    const int64_t lo = std::max(sc.lo[size_t(r)], kt) - kt;
    const int64_t hi = std::min(sc.hi[size_t(r)], kt + nc - 1) - kt;
    if (lo > hi) {
      std::fill(s, s + nc, 0.0f);
      return;
    }
    const float mx = row_max(s + lo, hi - lo + 1, sc.m[size_t(r)]);
    const float sum = exp_and_sum(s + lo, hi - lo + 1, mx);
    std::fill(s, s + lo, 0.0f);
    std::fill(s + hi + 1, s + nc, 0.0f);
    const float alpha = std::exp(sc.m[size_t(r)] - mx);  // 0 on the row's first visible tile
    if (alpha != 1.0f)
      for (int64_t c = 0; c < dv; ++c) orow[c] *= alpha;
    sc.l[size_t(r)] = sc.l[size_t(r)] * alpha + sum;
    sc.m[size_t(r)] = mx;
  }

  int64_t q_tiles_ = 0;
  int workers_ = 1;
  std::vector<Scratch> scratch_;  // one per worker thread
};

class FlashProvider final : public Provider {
 public:
  ProviderTraits traits() const override {
    ProviderTraits t;
    t.name = "cpu.flash";
    t.description =
        "fp32 tiled online softmax (FlashAttention forward), 64x256 tiles with OpenBLAS sgemm, "
        "masked tiles skipped; OpenMP over (batch, head, query tile); native GQA";
    t.device = DeviceKind::cpu;
    t.family = Family::fused;
    t.fused = true;
    t.library = "OpenBLAS";
    t.library_version = cpu::openblas_version();
    t.in_default_set = true;
    t.writes_lse = true;
    t.ragged = true;
    return t;
  }
  Fingerprint fingerprint() const override { return {{"blas", cpu::openblas_version()}}; }

  Support supports(const Spec& spec, const Device& device) const override {
    if (device.kind != DeviceKind::cpu) return Support::no("runs on the CPU only");
    if (spec.mode != Mode::fwd)
      return Support::no("forward only: cpu.flash has no backward (cpu.reference has one)");
    return cpu::check_blas_dims(spec);
  }

  int64_t workspace_estimate(const Spec&, const Settings&) const override {
    // The thread count is not known before prepare(); OpenMP's default (all cores) bounds it.
    return omp_get_max_threads() * Scratch::bytes();
  }

  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext& ctx,
                               const Io&) override {
    return std::make_unique<FlashRun>(spec, ctx);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cpu_flash() {
  return std::make_unique<FlashProvider>();
}

}  // namespace attnprof
