// test.mutant.* (mutant.hpp). A mutant prepares its base provider, then computes the rows its
// bug changes: from the point's inputs (read back from the tensors), with the fp64 reference of
// src/core/reference_block.hpp under the bug, or as a damage applied to the base's rows after
// each launch.
#include "providers/test/mutant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "attnprof/inputs.hpp"
#include "attnprof/reference.hpp"
#include "attnprof/verify.hpp"
#include "core/reference_block.hpp"
#include "providers/factories.hpp"

namespace attnprof::test {

std::string_view to_string(Mutation m) {
  switch (m) {
    case Mutation::dropped_tail_tile:
      return "dropped_tail_tile";
    case Mutation::wrong_row:
      return "wrong_row";
    case Mutation::wrong_pair:
      return "wrong_pair";
    case Mutation::swapped_kv_heads:
      return "swapped_kv_heads";
    case Mutation::diagonal_off_by_one:
      return "diagonal_off_by_one";
    case Mutation::window_too_wide:
      return "window_too_wide";
    case Mutation::wrong_lse:
      return "wrong_lse";
    case Mutation::wrong_dk_head:
      return "wrong_dk_head";
    case Mutation::race:
      return "race";
    case Mutation::row_off_5pct:
      return "row_off_5pct";
  }
  return "?";
}

std::optional<Mutation> parse_mutation(std::string_view s) {
  for (Mutation m : kMutations)
    if (to_string(m) == s) return m;
  return std::nullopt;
}

namespace {

constexpr int64_t kTile = 64;  // the query (and key) tile of the tile mutations

// Host tensors: fp32 in host memory.
class HostRows final : public RowAccess {
 public:
  std::vector<double> read(const TensorView& t, int64_t b, int64_t h, int64_t pos, int64_t count,
                           Stream&) override {
    std::vector<double> out(static_cast<size_t>(count * t.dim));
    const float* p = t.as<const float>();
    for (int64_t r = 0; r < count; ++r)
      for (int64_t d = 0; d < t.dim; ++d)
        out[static_cast<size_t>(r * t.dim + d)] = p[t.offset(b, h, pos + r, d)];
    return out;
  }
  void write(const TensorView& t, int64_t b, int64_t h, int64_t pos, int64_t count,
             const std::vector<double>& values, Stream&) override {
    float* p = t.as<float>();
    for (int64_t r = 0; r < count; ++r)
      for (int64_t d = 0; d < t.dim; ++d)
        p[t.offset(b, h, pos + r, d)] =
            static_cast<float>(values[static_cast<size_t>(r * t.dim + d)]);
  }
};

// Rows [first, first + count) of one (batch, head): a patch written after every launch.
struct Patch {
  TensorRole role = TensorRole::o;
  int64_t b = 0, h = 0, first = 0, count = 0;
  std::vector<double> values;
};

// What the mutation needs of the spec, in words ("" when it applies).
std::string needs(Mutation m, const Spec& s, bool writes_lse) {
  switch (m) {
    case Mutation::swapped_kv_heads:
      if (s.kv_heads < 2) return "needs two KV heads or more";
      break;
    case Mutation::diagonal_off_by_one:
      if (s.mask.kind != MaskKind::causal_tl && s.mask.kind != MaskKind::causal_br)
        return "needs a causal mask";
      break;
    case Mutation::window_too_wide:
      if (s.mask.kind != MaskKind::window) return "needs a sliding-window mask";
      break;
    case Mutation::wrong_pair:
      if (s.q_heads < 2) return "needs two query heads or more";
      break;
    case Mutation::wrong_lse:
      if (!writes_lse) return "needs a provider that writes the LSE";
      break;
    case Mutation::wrong_dk_head:
      return s.mode == Mode::fwd ? "needs a backward mode" : "";
    case Mutation::race:
      return "";
    default:
      break;
  }
  return s.mode == Mode::bwd ? "needs a forward mode" : "";
}

// The spec under a mask bug, for reference_block: the same rows, keys and diagonal, but the
// diagonal one key later, the window one key wider, or the keys cut at `kv_len` (the offset of
// the diagonal kept).
Spec buggy_spec(Spec s, Mutation m, int64_t kv_len) {
  const int64_t off = s.mask.diagonal_offset(s.q_len, s.kv_len);
  if (m == Mutation::diagonal_off_by_one) {
    s.mask.kind = MaskKind::causal_br;
    s.q_len = s.kv_len - (off + 1);  // off' = kv_len - q_len' = off + 1
  } else if (m == Mutation::window_too_wide) {
    s.mask.window += 1;
  } else if (m == Mutation::dropped_tail_tile) {
    s.kv_len = kv_len;
    if (s.mask.kind != MaskKind::none && s.mask.kind != MaskKind::causal_tl)
      s.q_len = s.kv_len - off;
  }
  return s;
}

class MutantRun final : public Run {
 public:
  MutantRun(Mutation m, const Spec& spec, std::unique_ptr<Run> base, RowAccess& rows,
            std::vector<Patch> patches)
      : m_(m), spec_(spec), base_(std::move(base)), rows_(rows), patches_(std::move(patches)) {}

  void bind(std::span<const Io> sets) override { base_->bind(sets); }
  void launch(Stream& stream, const Io& io) override {
    base_->launch(stream, io);
    ++launches_;
    damage(stream, io);
  }
  void publish(Stream& stream, const Io& io) override { base_->publish(stream, io); }
  int64_t workspace_bytes() const override { return base_->workspace_bytes(); }
  int64_t untracked_peak_bytes() const override { return base_->untracked_peak_bytes(); }
  std::string note() const override { return base_->note(); }

 private:
  // 3x the dtype's bound: just out of it.
  double factor(double bound) const { return 1.0 + 3.0 * bound; }

  void scale_rows(Stream& stream, const TensorView& t, int64_t b, int64_t h, int64_t first,
                  int64_t count, double f) {
    std::vector<double> v = rows_.read(t, b, h, first, count, stream);
    for (double& x : v) x *= f;
    rows_.write(t, b, h, first, count, v, stream);
  }

  void damage(Stream& stream, const Io& io) {
    for (const Patch& p : patches_)
      rows_.write(io[p.role], p.b, p.h, p.first, p.count, p.values, stream);
    const Tolerance tol = tolerance_for(spec_.dtype);
    const Spec& s = spec_;
    const int64_t mid_b = s.batch / 2, mid_h = s.q_heads / 2;
    const int64_t row = std::min(s.q_len - 1, s.q_len / 2 + 7);  // interior: no tile edge
    switch (m_) {
      case Mutation::wrong_row:
        scale_rows(stream, io.o, mid_b, mid_h, row, 1, factor(tol.output));
        break;
      case Mutation::row_off_5pct:
        scale_rows(stream, io.o, mid_b, mid_h, row, 1, 1.05);
        break;
      case Mutation::wrong_pair: {
        const std::vector<double> other =
            rows_.read(io.o, mid_b, (mid_h + 1) % s.q_heads, 0, s.q_len, stream);
        rows_.write(io.o, mid_b, mid_h, 0, s.q_len, other, stream);
        break;
      }
      case Mutation::wrong_lse: {
        std::vector<double> v = rows_.read(io.lse, mid_b, mid_h, row, 1, stream);
        v[0] += 3.0 * tol.lse_abs;
        rows_.write(io.lse, mid_b, mid_h, row, 1, v, stream);
        break;
      }
      case Mutation::wrong_dk_head:
        scale_rows(stream, io.dk, s.batch - 1, s.kv_heads - 1, 0, s.kv_len, factor(tol.gradient));
        break;
      case Mutation::race: {
        if (launches_ % 10 != 0) break;
        const uint64_t r = splitmix64(uint64_t(launches_));
        const int64_t b = int64_t(r % uint64_t(s.batch));
        const int64_t h = int64_t((r >> 16) % uint64_t(s.q_heads));
        const int64_t i = int64_t((r >> 32) % uint64_t(s.q_len));
        const bool grads = s.mode == Mode::bwd;
        scale_rows(stream, grads ? io.dq : io.o, b, h, i, 1,
                   factor(grads ? tol.gradient : tol.output));
        break;
      }
      default:
        break;
    }
  }

  Mutation m_;
  Spec spec_;
  std::unique_ptr<Run> base_;
  RowAccess& rows_;
  std::vector<Patch> patches_;
  int64_t launches_ = 0;
};

// One (batch, head) slice of input `t` as doubles.
std::vector<double> slice(RowAccess& rows, const TensorView& t, int64_t b, int64_t h,
                          Stream& stream) {
  return rows.read(t, b, h, 0, t.len, stream);
}

// O (and LSE) rows [first, first + count) of (b, h) under the bug, reading K/V of `kvh`.
void add_reference_patches(std::vector<Patch>& out, RowAccess& rows, const Spec& spec,
                           const Spec& bug, const Io& io, int64_t b, int64_t h, int64_t kvh,
                           int64_t first, int64_t count, Stream& stream) {
  const std::vector<double> q = slice(rows, io.q, b, h, stream);
  std::vector<double> k = slice(rows, io.k, b, kvh, stream);
  std::vector<double> v = slice(rows, io.v, b, kvh, stream);
  k.resize(static_cast<size_t>(bug.kv_len * spec.head_dim));
  v.resize(static_cast<size_t>(bug.kv_len * spec.dv()));
  Patch o{TensorRole::o, b, h, first, count, {}}, lse{TensorRole::lse, b, h, first, count, {}};
  for (int64_t i0 = first; i0 < first + count; i0 += kReferenceBlockRows) {
    const int64_t n = std::min(kReferenceBlockRows, first + count - i0);
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) idx[size_t(t)] = i0 + t;
    // Mutants take neither sinks nor softcap (their traits): no sink.
    const BlockRef ref = reference_block(bug, q, k, v, idx.data(), n, kNoSink);
    o.values.insert(o.values.end(), ref.o.begin(), ref.o.end());
    lse.values.insert(lse.values.end(), ref.lse.begin(), ref.lse.end());
  }
  out.push_back(std::move(o));
  if (io.lse.present()) out.push_back(std::move(lse));
}

class MutantProvider final : public Provider {
 public:
  MutantProvider(Mutation m, DeviceKind device) : m_(m), device_(device) {
    if (device == DeviceKind::cpu) {
      forward_ = make_cpu_flash();
      backward_ = make_cpu_reference();
      rows_ = make_host_rows();
    } else {
#if defined(ATTNPROF_WITH_CUDA)
#if defined(ATTNPROF_WITH_CUDNN)
      forward_ = make_cudnn_sdpa();
      backward_ = make_cudnn_sdpa();
#else
      forward_ = make_cuda_naive();
#endif
      rows_ = make_device_rows();
#endif
    }
  }

  ProviderTraits traits() const override {
    ProviderTraits t;
    t.name =
        fmt::format("test.mutant.{}{}", device_ == DeviceKind::cuda ? "cuda." : "", to_string(m_));
    t.description = fmt::format("mutation test: {} broken on purpose ({})",
                                forward_ ? forward_->name() : "nothing", to_string(m_));
    t.device = device_;
    t.family = Family::test;
    t.library = "attnprof";
    t.forward = true;
    t.backward = backward_ != nullptr;
    t.writes_lse = forward_ && forward_->traits().writes_lse;
    t.fp8 = forward_ && forward_->traits().fp8;
    return t;
  }
  Availability availability() const override {
    if (!forward_) return {false, "not built: CUDA"};
    return forward_->availability();
  }
  Support supports(const Spec& spec, const Device& device) const override {
    const Provider* base = base_for(spec);
    if (!base) return Support::no("no base provider for backward modes here");
    if (std::string why = needs(m_, spec, traits().writes_lse); !why.empty())
      return Support::no(fmt::format("{}: {}", to_string(m_), why));
    return base->supports(spec, device);
  }
  int64_t workspace_estimate(const Spec& spec, const Settings& settings) const override {
    const Provider* base = base_for(spec);
    return base ? base->workspace_estimate(spec, settings) : 0;
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io& io) override {
    Provider* base = base_for(spec);
    if (!base) throw NotSupported("no base provider for backward modes here");
    std::unique_ptr<Run> run = base->prepare(spec, device, ctx, io);
    Stream none;
    Stream& stream = ctx.stream ? *ctx.stream : none;
    return std::make_unique<MutantRun>(m_, spec, std::move(run), *rows_, patches(spec, io, stream));
  }

 private:
  Provider* base_for(const Spec& spec) const {
    return spec.mode == Mode::fwd ? forward_.get() : backward_.get();
  }

  // The rows the bug computes differently, from the reference under the bug.
  std::vector<Patch> patches(const Spec& s, const Io& io, Stream& stream) const {
    std::vector<Patch> out;
    const int64_t g = s.group_size();
    const int64_t last_b = s.batch - 1, last_h = s.q_heads - 1;
    const int64_t mid_tile = (s.q_len / 2) / kTile * kTile;
    switch (m_) {
      case Mutation::dropped_tail_tile: {
        // The last key tile: partial when kv_len is no multiple of the tile.
        const int64_t kept = (s.kv_len - 1) / kTile * kTile;
        const int64_t first = (s.q_len - 1) / kTile * kTile;
        add_reference_patches(out, *rows_, s, buggy_spec(s, m_, kept), io, last_b, last_h,
                              last_h / g, first, s.q_len - first, stream);
        break;
      }
      case Mutation::diagonal_off_by_one:
      case Mutation::window_too_wide:
        add_reference_patches(out, *rows_, s, buggy_spec(s, m_, s.kv_len), io, last_b, last_h,
                              last_h / g, mid_tile, std::min(kTile, s.q_len - mid_tile), stream);
        break;
      case Mutation::swapped_kv_heads:
        for (int64_t h = 0; h < g; ++h)
          add_reference_patches(out, *rows_, s, s, io, 0, h, 1, 0, s.q_len, stream);
        break;
      default:
        break;
    }
    return out;
  }

  Mutation m_;
  DeviceKind device_;
  std::unique_ptr<Provider> forward_, backward_;
  std::unique_ptr<RowAccess> rows_;
};

}  // namespace

std::unique_ptr<RowAccess> make_host_rows() {
  return std::make_unique<HostRows>();
}

std::unique_ptr<Provider> make_mutant(Mutation m, DeviceKind device) {
  return std::make_unique<MutantProvider>(m, device);
}

}  // namespace attnprof::test

namespace attnprof {

std::vector<std::unique_ptr<Provider>> make_test_mutants() {
  std::vector<std::unique_ptr<Provider>> out;
  for (test::Mutation m : test::kMutations) out.push_back(test::make_mutant(m, DeviceKind::cpu));
#if defined(ATTNPROF_WITH_CUDA)
  for (test::Mutation m : test::kMutations) out.push_back(test::make_mutant(m, DeviceKind::cuda));
#endif
  return out;
}

}  // namespace attnprof
