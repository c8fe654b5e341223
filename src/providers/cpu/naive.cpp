// cpu.naive: attention as the textbook three steps, in fp32, per (batch, query head):
//   S = scale * Q K^T (cblas_sgemm into a q_len x kv_len buffer), masked row softmax of S in
//   place, O = P V (cblas_sgemm). GQA is native: head h reads KV head h / group, nothing is
//   copied. The full score matrix is materialized, one per worker thread, so memory grows as
//   q_len * kv_len: the baseline whose quadratic footprint cpu.flash removes. Forward only.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <string>

#include "cpu_run.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

// Softmax of one score row over its visible keys [first, last], in place; keys outside get
// probability 0. Returns the natural-log LSE of the row (-inf and an all-zero row when empty).
float masked_softmax_row(float* s, int64_t n, int64_t first, int64_t last) {
  if (first > last) {
    std::fill(s, s + n, 0.0f);
    return -std::numeric_limits<float>::infinity();
  }
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = first; j <= last; ++j) m = std::max(m, s[j]);
  float sum = 0;
  for (int64_t j = first; j <= last; ++j) {
    s[j] = std::exp(s[j] - m);
    sum += s[j];
  }
  const float inv = 1.0f / sum;
  for (int64_t j = first; j <= last; ++j) s[j] *= inv;
  std::fill(s, s + first, 0.0f);
  std::fill(s + last + 1, s + n, 0.0f);
  return m + std::log(sum);
}

class NaiveRun final : public cpu::CpuRun {
 public:
  NaiveRun(const Spec& spec, const PrepareContext& ctx) : CpuRun(spec, ctx) {
    cpu::use_single_threaded_blas();
    workers_ = cpu::cpu_threads(threads_, spec.batch * spec.q_heads);
    const int64_t elems = spec.q_len * spec.kv_len;
    try {
      // Allocated (and zeroed, so its pages are resident) here, never inside a timed launch.
      scores_.assign(static_cast<size_t>(workers_), std::vector<float>(static_cast<size_t>(elems)));
    } catch (const std::bad_alloc&) {
      throw OutOfMemory("cpu.naive: " + std::to_string(workers_) + " score buffers of " +
                        std::to_string(elems * 4) + " bytes");
    }
    add_workspace(workers_ * elems * int64_t{sizeof(float)});
  }

  void launch(Stream&, const Io& io) override {
    const int64_t heads = spec_.batch * spec_.q_heads;
#pragma omp parallel for num_threads(workers_) schedule(dynamic, 1)
    for (int64_t bh = 0; bh < heads; ++bh)
      head(io, bh / spec_.q_heads, bh % spec_.q_heads,
           scores_[static_cast<size_t>(omp_get_thread_num())].data());
  }

 private:
  void head(const Io& io, int64_t b, int64_t h, float* s) {
    const Spec& sp = spec_;
    const int64_t kvh = h / sp.group_size();
    // A ragged batch's sequence: its lengths (io.seq_q, seq_kv), its mask; padding untouched.
    const cpu::SeqDims n = cpu::seq_dims(sp, io, b);
    const int64_t dv = sp.dv(), nq = n.nq, nk = n.nk;
    // Dimensions fit int: supports() checked them (check_blas_dims).
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(nq), int(nk), int(sp.head_dim),
                static_cast<float>(sp.softmax_scale()), io.q.as<float>() + io.q.offset(b, h, 0),
                int(io.q.stride_s()), io.k.as<float>() + io.k.offset(b, kvh, 0),
                int(io.k.stride_s()), 0.0f, s, int(nk));
    float* lse = io.lse.as<float>() + io.lse.offset(b, h, 0);
    for (int64_t i = 0; i < nq; ++i) {
      const int64_t first = std::max<int64_t>(0, sp.mask.first_visible(i, nq, nk));
      const int64_t last = std::min<int64_t>(nk - 1, sp.mask.last_visible(i, nq, nk));
      lse[i] = masked_softmax_row(s + i * nk, nk, first, last);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(nq), int(dv), int(nk), 1.0f, s,
                int(nk), io.v.as<float>() + io.v.offset(b, kvh, 0), int(io.v.stride_s()), 0.0f,
                io.o.as<float>() + io.o.offset(b, h, 0), int(io.o.stride_s()));
  }

  int workers_ = 1;
  std::vector<std::vector<float>> scores_;  // one q_len x kv_len buffer per worker thread
};

class NaiveProvider final : public Provider {
 public:
  ProviderTraits traits() const override {
    ProviderTraits t;
    t.name = "cpu.naive";
    t.description =
        "fp32 S = QK^T (OpenBLAS sgemm), masked softmax, O = PV (sgemm); full score matrix per "
        "thread; OpenMP over (batch, head); native GQA";
    t.device = DeviceKind::cpu;
    t.family = Family::naive;
    t.library = "OpenBLAS";
    t.library_version = cpu::openblas_version();
    t.in_default_set = true;
    t.role = Role::baseline;
    t.writes_lse = true;
    t.ragged = true;
    return t;
  }
  Fingerprint fingerprint() const override { return {{"blas", cpu::openblas_version()}}; }

  Support supports(const Spec& spec, const Device& device) const override {
    if (device.kind != DeviceKind::cpu) return Support::no("runs on the CPU only");
    if (spec.mode != Mode::fwd)
      return Support::no("forward only: cpu.naive has no backward (cpu.reference has one)");
    return cpu::check_blas_dims(spec);
  }

  int64_t workspace_estimate(const Spec& spec, const Settings&) const override {
    // One full score matrix per worker; the thread count is not known before prepare(), so
    // OpenMP's default (all cores) bounds it.
    const int workers = cpu::cpu_threads(omp_get_max_threads(), spec.batch * spec.q_heads);
    return workers * spec.q_len * spec.kv_len * int64_t{sizeof(float)};
  }

  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext& ctx,
                               const Io&) override {
    return std::make_unique<NaiveRun>(spec, ctx);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cpu_naive() {
  return std::make_unique<NaiveProvider>();
}

}  // namespace attnprof
