// cpu.reference: the fp64 oracle (src/core/reference.cpp) as a provider. Every output comes from
// reference_row and group_grads_from_slices on double copies of the float inputs, so it is the
// verifier's own answer: useful to check the pipeline end to end, and the yardstick for small
// shapes. Every mask, GQA, every mode and dtype; outputs are stored as float.
#include <omp.h>

#include <cmath>

#include "attnprof/ragged.hpp"
#include "attnprof/reference.hpp"
#include "cpu_run.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

// B*Hq*Nq*Nk*D above which the oracle is refused: 2^34 multiply-adds per pass take minutes in
// scalar fp64, longer than any point's timeout.
constexpr double kMaxWork = double(1ull << 34);

// One (batch, head) slice of a float tensor as a contiguous len x dim double array.
std::vector<double> to_double(const TensorView& t, int64_t b, int64_t h) {
  std::vector<double> out(static_cast<size_t>(t.len * t.dim));
  const float* src = t.as<const float>();
  for (int64_t pos = 0; pos < t.len; ++pos)
    for (int64_t c = 0; c < t.dim; ++c)
      out[static_cast<size_t>(pos * t.dim + c)] = src[t.offset(b, h, pos, c)];
  return out;
}

// Writes a contiguous len x dim double slice into a float tensor.
void from_double(const std::vector<double>& src, size_t src_offset, const TensorView& t, int64_t b,
                 int64_t h) {
  float* dst = t.as<float>();
  for (int64_t pos = 0; pos < t.len; ++pos)
    for (int64_t c = 0; c < t.dim; ++c)
      dst[t.offset(b, h, pos, c)] =
          static_cast<float>(src[src_offset + static_cast<size_t>(pos * t.dim + c)]);
}

// Scratch bytes per worker thread, at most: K and V of one group, Q and dO of its query heads,
// and the group's gradients, all in double (allocated inside launch, freed at its end).
int64_t scratch_bytes_per_thread(const Spec& s) {
  const int64_t row = s.head_dim + s.dv();
  return (s.kv_len * row * 2 + s.group_size() * s.q_len * row * 2) * int64_t{sizeof(double)};
}

class ReferenceRun final : public cpu::CpuRun {
 public:
  ReferenceRun(const Spec& spec, const PrepareContext& ctx) : CpuRun(spec, ctx) {
    add_workspace(cpu::cpu_threads(threads_, spec.batch * spec.kv_heads) *
                  scratch_bytes_per_thread(spec));
  }

  void launch(Stream&, const Io& io) override {
    const Spec& s = spec_;
    const int64_t groups = s.batch * s.kv_heads;
    const int threads = cpu::cpu_threads(threads_, groups);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t grp = 0; grp < groups; ++grp) run_group(io, grp / s.kv_heads, grp % s.kv_heads);
  }

 private:
  void run_group(const Io& io, int64_t b, int64_t kvh) {
    const Spec& s = spec_;
    const int64_t g = s.group_size();
    const int64_t d = s.head_dim, dv = s.dv();
    const std::vector<double> k = to_double(io.k, b, kvh);
    const std::vector<double> v = to_double(io.v, b, kvh);
    std::vector<double> q, d_o;
    for (int64_t t = 0; t < g; ++t) {
      const std::vector<double> qs = to_double(io.q, b, kvh * g + t);
      q.insert(q.end(), qs.begin(), qs.end());
      if (s.mode != Mode::fwd) {
        const std::vector<double> ds = to_double(io.d_o, b, kvh * g + t);
        d_o.insert(d_o.end(), ds.begin(), ds.end());
      }
    }
    if (s.mode != Mode::bwd) {
      float* o = io.o.as<float>();
      float* lse = io.lse.as<float>();
      // A ragged batch's sequence: its own lengths (io.seq_q, seq_kv), the padded slices' rows.
      const cpu::SeqDims n = cpu::seq_dims(s, io, b);
      const Spec seq = sequence_spec(s, n.nq, n.nk);
      for (int64_t t = 0; t < g; ++t) {
        const int64_t h = kvh * g + t;
        // The harness's sink logits (io.sink), as a provider must take them.
        const double sink = io.sink.present() ? double(io.sink.as<const float>()[h]) : kNoSink;
        for (int64_t i = 0; i < n.nq; ++i) {
          const RowRef r =
              reference_row(seq, &q[static_cast<size_t>((t * s.q_len + i) * d)], k, v, i, sink);
          for (int64_t c = 0; c < dv; ++c)
            o[io.o.offset(b, h, i, c)] = static_cast<float>(r.o[static_cast<size_t>(c)]);
          lse[io.lse.offset(b, h, i)] = static_cast<float>(r.lse);
        }
      }
    }
    if (s.mode != Mode::fwd) {
      const GroupGrads gr = group_grads_from_slices(s, q, k, v, d_o);
      for (int64_t t = 0; t < g; ++t)
        from_double(gr.dq, static_cast<size_t>(t * s.q_len * d), io.dq, b, kvh * g + t);
      from_double(gr.dk, 0, io.dk, b, kvh);
      from_double(gr.dv, 0, io.dv, b, kvh);
    }
  }
};

class ReferenceProvider final : public Provider {
 public:
  ProviderTraits traits() const override {
    ProviderTraits t;
    t.name = "cpu.reference";
    t.description =
        "fp64 reference (exact softmax over visible keys, exact backward), OpenMP over (batch, "
        "KV head) groups; the verifier's oracle";
    t.device = DeviceKind::cpu;
    t.family = Family::reference;
    t.library = "attnprof";
    t.backward = true;
    t.writes_lse = true;
    t.paged_kv = true;  // reads K and V through TensorView::offset, pages included
    t.fp8 = true;       // host tensors hold the real values of fp8 inputs (inputs.hpp)
    t.softcap = true;   // reference_row caps the scores
    t.sinks = true;     // and takes the sink logits of io.sink
    t.ragged = true;    // each sequence at its own lengths (io.seq_q, seq_kv)
    return t;
  }

  Support supports(const Spec& spec, const Device& device) const override {
    if (device.kind != DeviceKind::cpu) return Support::no("runs on the CPU only");
    const double work = double(spec.batch) * double(spec.q_heads) * double(spec.q_len) *
                        double(spec.kv_len) * double(spec.head_dim);
    if (work > kMaxWork)
      return Support::no("too slow for the fp64 oracle: B*Hq*Nq*Nk*D above 2^34");
    return Support::yes();
  }

  int64_t workspace_estimate(const Spec& spec, const Settings&) const override {
    // The thread count is not known before prepare(); OpenMP's default (all cores) bounds it.
    const int threads = cpu::cpu_threads(omp_get_max_threads(), spec.batch * spec.kv_heads);
    return threads * scratch_bytes_per_thread(spec);
  }

  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext& ctx,
                               const Io&) override {
    return std::make_unique<ReferenceRun>(spec, ctx);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cpu_reference() {
  return std::make_unique<ReferenceProvider>();
}

}  // namespace attnprof
