// cudnn.sdpa: cuDNN 9's fused attention (the "flash" SDPA engines) through the cuDNN frontend's
// C++ graph API. One forward graph (O and the log-sum-exp stats) and, for bwd modes, one
// backward graph (dQ, dK, dV from Q, K, V, O, dO and the stats) per point. Graphs are built in
// prepare(), never timed; a graph that cuDNN rejects at any build step throws NotSupported with
// cuDNN's own message. cudnn.sdpa.infer builds the forward without the log-sum-exp (cuDNN's
// inference forward). This is the only translation unit that includes the frontend headers
// (they are heavy), so everything frontend-specific stays in this file.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attnprof/provider.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "providers/cuda/provider_common.hpp"
#include "providers/cudnn/cudnn_version.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

namespace fe = cudnn_frontend;
using cuda::DeviceBuffer;

// Tensor uids shared by the forward and backward graphs' variant packs.
enum Uid : int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kDO,
  kDQ,
  kDK,
  kDV,
  kPageTable,
  kSeqQ,
  kSeqKV,
  // fp8 only: the per-tensor scales (fp8_scalars below) and the amax cuDNN reports of P and O
  kDescaleQ,
  kDescaleK,
  kDescaleV,
  kDescaleS,
  kScaleS,
  kScaleO,
  kAmaxS,
  kAmaxO,
  kSink,  // Spec::sinks: the sink logits, (1, Hq, 1, 1) fp32
  // fp8 backward only: the descales of O, dO and dP (the gradient of the scores, which cuDNN
  // rounds to fp8 before dQ and dK), the scales of dP, dQ, dK and dV, their four amax outputs
  kDescaleO,
  kDescaleDO,
  kDescaleDP,
  kScaleDP,
  kScaleDQ,
  kScaleDK,
  kScaleDV,
  kAmaxDQ,
  kAmaxDK,
  kAmaxDV,
  kAmaxDP
};

// fp8: P (the softmax probabilities, in [0, 1]) goes to fp8 times this before P V, a power of two
// below e4m3's largest value (448), so the largest probability keeps full precision; its descale
// is exact.
constexpr float kScaleP = 256.0f;

// fp8 backward: dP (cuDNN's name for the scores' gradient, scale * P o (dP - D), the gradient of
// Q K^T) goes to fp8 times this before dQ and dK. Its largest |value| measured on the H200 was
// 1.0 in causal attention (the first rows, which see few keys) and 0.24 down to 0.03 without a
// mask from N 1k to 16k (cuDNN's amax output, bench/results/h200/2026-12-02-fp8-backward), most
// elements far smaller (P ~ 1/N). The scale puts 1.75 (e4m3, 2^8) and 3.5 (e5m2, 2^14) at the
// format's largest value, which keeps e4m3's small elements out of its subnormals (a scale of 16
// let the worst dQ row of N 16k without a mask reach 0.375). A power of two: the descale is exact.
float dp_scale(DType t) {
  return t == DType::fp8_e5m2 ? 16384.0f : 256.0f;
}

constexpr int64_t kMaxHeadDim = 256;  // cuDNN 9's fp16/bf16 SDPA limit on sm_90 (and 9.10+ sm_80)

// One cuDNN handle per provider object, created on first use. A handle binds to the current
// device and costs a CUDA context plus cuDNN's own state, so it is never made per point.
class Handle {
 public:
  explicit Handle(cudnnHandle_t h) : h_(h) {}
  ~Handle() { cudnnDestroy(h_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cudnnHandle_t get() const { return h_; }

 private:
  cudnnHandle_t h_;
};

// --- graph construction ------------------------------------------------------------------

std::vector<int64_t> dims(int64_t b, int64_t h, int64_t s, int64_t d) {
  return {b, h, s, d};
}

// Strides of a (B, H, S, D) tensor stored in the spec's layout: cuDNN always sees logical
// (B, H, S, D) dims; bshd is the same tensor with heads and positions interleaved.
std::vector<int64_t> strides(Layout layout, int64_t h, int64_t s, int64_t d) {
  if (layout == Layout::bshd) return {s * h * d, d, h * d, 1};
  return {h * s * d, s * d, d, 1};
}

using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

TensorPtr io_tensor(fe::graph::Graph& g, const char* name, Uid uid, const Spec& s, int64_t heads,
                    int64_t len, int64_t dim) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(dims(s.batch, heads, len, dim))
                      .set_stride(strides(s.layout, heads, len, dim)));
}

// K or V of a paged cache: cuDNN's container of pages, (pages, H, page_size, D) dims with the
// strides of a page in the spec's layout (io.hpp TensorView).
TensorPtr paged_tensor(fe::graph::Graph& g, const char* name, Uid uid, const Spec& s, int64_t dim) {
  const int64_t pages = s.block_table_elems(), h = s.kv_heads, ps = s.page_size;
  std::vector<int64_t> stride = s.layout == Layout::bshd
                                    ? std::vector<int64_t>{ps * h * dim, dim, h * dim, 1}
                                    : std::vector<int64_t>{h * ps * dim, ps * dim, dim, 1};
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({pages, h, ps, dim})
                      .set_stride(std::move(stride)));
}

TensorPtr int32_tensor(fe::graph::Graph& g, const char* name, Uid uid, std::vector<int64_t> dim,
                       std::vector<int64_t> stride) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(std::move(dim))
                      .set_stride(std::move(stride))
                      .set_data_type(fe::DataType_t::INT32));
}

// A paged cache: one block table for K and V (its engines also need the padding mask).
void apply_paging(fe::graph::SDPA_attributes& a, fe::graph::Graph& g, const Spec& s) {
  const int64_t pps = s.pages_per_seq();
  auto table = int32_tensor(g, "page_table", kPageTable, {s.batch, 1, pps, 1}, {pps, pps, 1, 1});
  a.set_paged_attention_k_table(table)
      .set_paged_attention_v_table(table)
      .set_paged_attention_max_seq_len_kv(static_cast<int>(s.kv_len));
}

// cuDNN's padding mask: per sequence its query rows and keys (int32, (B, 1, 1, 1)). A ragged
// batch's are the harness's (Io::seq_q, seq_kv); a paged uniform one's are whole sequences.
void apply_padding(fe::graph::SDPA_attributes& a, fe::graph::Graph& g, const Spec& s) {
  a.set_padding_mask(true)
      .set_seq_len_q(int32_tensor(g, "seq_len_q", kSeqQ, {s.batch, 1, 1, 1}, {1, 1, 1, 1}))
      .set_seq_len_kv(int32_tensor(g, "seq_len_kv", kSeqKV, {s.batch, 1, 1, 1}, {1, 1, 1, 1}));
}

// The log-sum-exp per query row: fp32, (B, Hq, Nq, 1), always contiguous in (B, Hq, Nq) order.
void describe_stats(fe::graph::Tensor_attributes& t, const Spec& s) {
  t.set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim(dims(s.batch, s.q_heads, s.q_len, 1))
      .set_stride({s.q_heads * s.q_len, s.q_len, 1, 1});
}

void describe_output(fe::graph::Tensor_attributes& t, Uid uid, const Spec& s, int64_t heads,
                     int64_t len, int64_t dim) {
  t.set_output(true)
      .set_uid(uid)
      .set_dim(dims(s.batch, heads, len, dim))
      .set_stride(strides(s.layout, heads, len, dim));
}

// The spec's mask in cuDNN's diagonal-band terms. cuDNN keeps key j for query i iff
// j <= i + off + right_bound and j > i + off - left_bound, with off = 0 (TOP_LEFT) or
// kv_len - q_len (BOTTOM_RIGHT): exactly Mask::visible with right_bound 0 and left_bound W.
// The graph gets the spec's simplest equivalent mask: cuDNN's heuristics choose engines by the
// mask, and a bottom-right causal decode step (which hides nothing) built with its diagonal
// gets a slower engine than the maskless graph PyTorch builds for the same call.
template <class Attributes>
void apply_mask(Attributes& a, const Spec& s) {
  const Mask m = s.mask.simplest(s.q_len, s.kv_len);
  switch (m.kind) {
    case MaskKind::none:
      return;
    case MaskKind::causal_tl:
      a.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT).set_diagonal_band_right_bound(0);
      return;
    case MaskKind::causal_br:
      a.set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT)
          .set_diagonal_band_right_bound(0);
      return;
    case MaskKind::window:
      a.set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT)
          .set_diagonal_band_right_bound(0)
          .set_diagonal_band_left_bound(static_cast<int>(m.window));
      return;
  }
}

fe::DataType_t io_type(DType t) {
  switch (t) {
    case DType::bf16:
      return fe::DataType_t::BFLOAT16;
    case DType::fp8_e4m3:
      return fe::DataType_t::FP8_E4M3;
    case DType::fp8_e5m2:
      return fe::DataType_t::FP8_E5M2;
    case DType::fp16:
    case DType::fp32:
      break;
  }
  return fe::DataType_t::HALF;
}

// Logit softcap (Spec::softcap) through cuDNN's score modifier, the frontend's Softcap helper on
// the scaled scores. A graph with a score modifier takes no mask of its own, so a top-left causal
// mask is applied inside the modifier after the cap (the frontend's causal_mask helper); other
// masks have no such helper that needs no sequence-length tensors: not supported.
void apply_softcap(fe::graph::SDPA_attributes& a, const Spec& s) {
  namespace mods = fe::graph::attn::score_modifiers;
  const Mask m = s.mask.simplest(s.q_len, s.kv_len);
  if (m.kind != MaskKind::none && m.kind != MaskKind::causal_tl) {
    throw NotSupported(
        "cuDNN applies a softcap through its score modifier, which combines here "
        "with no mask or top-left causal only (this point's: " +
        to_string(m) + ")");
  }
  const bool causal = m.kind == MaskKind::causal_tl;
  const float cap = static_cast<float>(s.softcap);
  a.set_score_mod([cap, causal](std::shared_ptr<fe::graph::Graph> g,
                                std::shared_ptr<fe::graph::Tensor_attributes> score) {
    auto capped =
        mods::Softcap().forward(g, score, std::make_shared<fe::graph::Tensor_attributes>(cap));
    return causal ? mods::causal_mask(g, capped) : capped;
  });
}

// fp8 only: a per-tensor scale or descale, one fp32 value.
TensorPtr scalar_tensor(fe::graph::Graph& g, const char* name, Uid uid) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({1, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

// fp8 only: an amax output cuDNN writes (never read).
void describe_amax(fe::graph::Tensor_attributes& t, Uid uid) {
  t.set_output(true)
      .set_uid(uid)
      .set_dim({1, 1, 1, 1})
      .set_stride({1, 1, 1, 1})
      .set_data_type(fe::DataType_t::FLOAT);
}

std::shared_ptr<fe::graph::Graph> new_graph(const Spec& s, const char* name) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_name(name)
      .set_io_data_type(io_type(s.dtype))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

// Forward: O = softmax(scale * Q K^T + mask) V, plus (with `stats`: the training forward) the
// stats (natural-log LSE of the scaled, masked scores), which the backward needs and the
// verifier checks. Without them it is cuDNN's inference forward, which may pick another engine.
std::shared_ptr<fe::graph::Graph> forward_graph(const Spec& s, bool stats_out) {
  auto g = new_graph(s, "attnprof_sdpa_fwd");
  auto q = io_tensor(*g, "Q", kQ, s, s.q_heads, s.q_len, s.head_dim);
  auto k = s.paged() ? paged_tensor(*g, "K", kK, s, s.head_dim)
                     : io_tensor(*g, "K", kK, s, s.kv_heads, s.kv_len, s.head_dim);
  auto v = s.paged() ? paged_tensor(*g, "V", kV, s, s.dv())
                     : io_tensor(*g, "V", kV, s, s.kv_heads, s.kv_len, s.dv());
  auto attrs =
      fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(stats_out).set_attn_scale(
          static_cast<float>(s.softmax_scale()));
  if (s.softcap > 0) {
    apply_softcap(attrs, s);  // the mask goes inside the score modifier
  } else {
    apply_mask(attrs, s);
  }
  if (s.sinks) {
    attrs.set_sink_token(g->tensor(fe::graph::Tensor_attributes()
                                       .set_name("sink")
                                       .set_uid(kSink)
                                       .set_dim({1, s.q_heads, 1, 1})
                                       .set_stride({s.q_heads, 1, 1, 1})
                                       .set_data_type(fe::DataType_t::FLOAT)));
  }
  if (s.paged()) apply_paging(attrs, *g, s);
  if (s.paged() || s.ragged()) apply_padding(attrs, *g, s);
  std::shared_ptr<fe::graph::Tensor_attributes> o, stats;
  if (is_fp8(s.dtype)) {
    // The fp8 forward: Q, K, V dequantized by their descales, P quantized with kScaleP and O
    // with O's scale (the harness's per-tensor scales, inputs.hpp); cuDNN also reports the amax
    // of P and O (written, not read).
    const auto scalar = [&](const char* name, Uid uid) { return scalar_tensor(*g, name, uid); };
    auto [o8, stats8, amax_s, amax_o] =
        g->sdpa_fp8(q, k, v, scalar("descale_q", kDescaleQ), scalar("descale_k", kDescaleK),
                    scalar("descale_v", kDescaleV), scalar("descale_s", kDescaleS),
                    scalar("scale_s", kScaleS), scalar("scale_o", kScaleO), std::move(attrs));
    describe_amax(*amax_s, kAmaxS);
    describe_amax(*amax_o, kAmaxO);
    o = o8;
    stats = stats8;
  } else {
    auto out = g->sdpa(q, k, v, std::move(attrs));
    o = out[0];
    stats = out[1];
  }
  describe_output(*o, kO, s, s.q_heads, s.q_len, s.dv());
  if (stats_out) {
    stats->set_output(true);
    describe_stats(*stats, s);
  }
  return g;
}

std::shared_ptr<fe::graph::Graph> backward_graph(const Spec& s) {
  auto g = new_graph(s, "attnprof_sdpa_bwd");
  auto q = io_tensor(*g, "Q", kQ, s, s.q_heads, s.q_len, s.head_dim);
  auto k = io_tensor(*g, "K", kK, s, s.kv_heads, s.kv_len, s.head_dim);
  auto v = io_tensor(*g, "V", kV, s, s.kv_heads, s.kv_len, s.dv());
  auto o = io_tensor(*g, "O", kO, s, s.q_heads, s.q_len, s.dv());
  auto d_o = io_tensor(*g, "dO", kDO, s, s.q_heads, s.q_len, s.dv());
  auto stats = g->tensor(fe::graph::Tensor_attributes().set_name("stats"));
  describe_stats(*stats, s);
  TensorPtr dq, dk, dv;
  if (is_fp8(s.dtype)) {
    // The fp8 backward: every input dequantized by its descale (P by kScaleP's, dP by
    // dp_scale's), dP and the gradients quantized by their scales; dQ, dK and dV in fp8 at the
    // harness's scale (cuDNN writes fp16/bf16 gradients on Blackwell only).
    auto attrs = fe::graph::SDPA_fp8_backward_attributes()
                     .set_name("sdpa_fp8_backward")
                     .set_attn_scale(static_cast<float>(s.softmax_scale()));
    apply_mask(attrs, s);
    const auto scalar = [&](const char* name, Uid uid) { return scalar_tensor(*g, name, uid); };
    auto out = g->sdpa_fp8_backward(
        q, k, v, o, d_o, stats, scalar("descale_q", kDescaleQ), scalar("descale_k", kDescaleK),
        scalar("descale_v", kDescaleV), scalar("descale_o", kDescaleO),
        scalar("descale_do", kDescaleDO), scalar("descale_s", kDescaleS),
        scalar("descale_dp", kDescaleDP), scalar("scale_s", kScaleS), scalar("scale_dq", kScaleDQ),
        scalar("scale_dk", kScaleDK), scalar("scale_dv", kScaleDV), scalar("scale_dp", kScaleDP),
        std::move(attrs));
    dq = out[0];
    dk = out[1];
    dv = out[2];
    describe_amax(*out[3], kAmaxDQ);
    describe_amax(*out[4], kAmaxDK);
    describe_amax(*out[5], kAmaxDV);
    describe_amax(*out[6], kAmaxDP);
  } else {
    auto attrs = fe::graph::SDPA_backward_attributes()
                     .set_name("sdpa_backward")
                     .set_attn_scale(static_cast<float>(s.softmax_scale()));
    apply_mask(attrs, s);
    auto out = g->sdpa_backward(q, k, v, o, d_o, stats, std::move(attrs));
    dq = out[0];
    dk = out[1];
    dv = out[2];
  }
  describe_output(*dq, kDQ, s, s.q_heads, s.q_len, s.head_dim);
  describe_output(*dk, kDK, s, s.kv_heads, s.kv_len, s.head_dim);
  describe_output(*dv, kDV, s, s.kv_heads, s.kv_len, s.dv());
  return g;
}

// cuDNN's message in one line. A failed plan search lists every engine it tried, each as a JSON
// line of knobs followed by its "Warning: ...; Reason: <why> at: <where>" trail: the first line
// and each engine's first reason (once each) say it.
std::string one_line(const std::string& message) {
  std::vector<std::string> lines;
  for (size_t at = 0; at <= message.size();) {
    const size_t end = std::min(message.find('\n', at), message.size());
    lines.push_back(message.substr(at, end - at));
    at = end + 1;
  }
  std::string first = lines.front();
  while (!first.empty() && (first.back() == '_' || first.back() == ' ')) first.pop_back();
  std::vector<std::string> reasons;
  bool engine_start = false;
  for (const std::string& line : lines) {
    if (!line.empty() && line.front() == '{') {
      engine_start = true;
      continue;
    }
    const size_t r = line.find("Reason: ");
    if (!engine_start || r == std::string::npos) continue;
    engine_start = false;
    std::string why = line.substr(r + 8);
    if (const size_t a = why.find(" at: "); a != std::string::npos) why.resize(a);
    if (std::find(reasons.begin(), reasons.end(), why) == reasons.end()) reasons.push_back(why);
  }
  for (size_t i = 0; i < reasons.size(); ++i) first += (i ? "; " : " (engines: ") + reasons[i];
  return reasons.empty() ? first : first + ")";
}

void require(fe::error_t status, const char* step) {
  if (status.is_good()) return;
  std::string message = one_line(status.get_message());
  if (message.empty()) message = "failed without a message";
  throw NotSupported(std::string("cuDNN ") + step + ": " + message);
}

// validate -> operation graph -> plans from heuristics A (then the fallback list) -> support
// check -> compiled plans. Every failure is cuDNN saying "not this shape": NotSupported.
void build(fe::graph::Graph& g, cudnnHandle_t handle) {
  try {
    require(g.validate(), "validate");
    require(g.build_operation_graph(handle), "build_operation_graph");
    require(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}),
            "create_execution_plans");
    require(g.check_support(handle), "check_support");
    require(g.build_plans(handle), "build_plans");
  } catch (const fe::cudnnException& e) {
    throw NotSupported("cuDNN: " + one_line(e.what()));
  }
}

// The built graphs of one spec and the workspace the larger of them needs.
struct Graphs {
  std::shared_ptr<fe::graph::Graph> fwd, bwd;  // bwd is null for Mode::fwd
  int64_t workspace_bytes = 0;
};

std::shared_ptr<const Graphs> build_graphs(const Spec& s, bool stats, cudnnHandle_t handle) {
  auto graphs = std::make_shared<Graphs>();
  // The forward graph exists in every mode: bwd runs it once in prepare to make O and the stats.
  graphs->fwd = forward_graph(s, stats);
  build(*graphs->fwd, handle);
  int64_t ws = 0;
  require(graphs->fwd->get_workspace_size(ws), "get_workspace_size");
  graphs->workspace_bytes = ws;
  if (s.mode != Mode::fwd) {
    graphs->bwd = backward_graph(s);
    build(*graphs->bwd, handle);
    require(graphs->bwd->get_workspace_size(ws), "get_workspace_size");
    graphs->workspace_bytes = std::max(graphs->workspace_bytes, ws);
  }
  return graphs;
}

// --- the prepared point --------------------------------------------------------------------

int64_t stats_elems(const Spec& s) {
  return s.batch * s.q_heads * s.q_len;
}

class CudnnSdpaRun final : public Run {
 public:
  // Mode bwd runs the forward once here: O and the stats it writes into `io` are what every
  // timed backward reads.
  CudnnSdpaRun(const Spec& spec, std::shared_ptr<Handle> handle,
               std::shared_ptr<const Graphs> graphs, const PrepareContext& ctx, const Io& io)
      : spec_(spec), handle_(std::move(handle)), graphs_(std::move(graphs)) {
    if (graphs_->workspace_bytes > 0) {
      workspace_ = DeviceBuffer(graphs_->workspace_bytes, ctx.tracker);
    }
    if (spec.paged() && !spec.ragged()) {
      // Every sequence of the batch is whole: q_len queries on kv_len keys.
      const auto lengths = [&](int64_t len) {
        const std::vector<int32_t> host(static_cast<size_t>(spec.batch), static_cast<int32_t>(len));
        DeviceBuffer b(static_cast<int64_t>(host.size() * sizeof(int32_t)), ctx.tracker);
        ATTNPROF_CUDA(cudaMemcpy(b.data(), host.data(), host.size() * sizeof(int32_t),
                                 cudaMemcpyHostToDevice));
        return b;
      };
      seq_q_ = lengths(spec.q_len);
      seq_kv_ = lengths(spec.kv_len);
    }
    if (is_fp8(spec.dtype)) {
      const std::vector<float> host = fp8_scalars(spec.dtype);
      scalars_ = DeviceBuffer(static_cast<int64_t>(host.size() * sizeof(float)), ctx.tracker);
      ATTNPROF_CUDA(cudaMemcpy(scalars_.data(), host.data(), host.size() * sizeof(float),
                               cudaMemcpyHostToDevice));
    }
    if (spec.mode == Mode::bwd) {
      cudaStream_t prepare_stream = nullptr;
      std::unordered_map<int64_t, void*> pack = forward_pack(io);
      execute(*graphs_->fwd, pack, prepare_stream);
      ATTNPROF_CUDA(cudaStreamSynchronize(prepare_stream));
    }
  }

  void launch(Stream& stream, const Io& io) override {
    auto s = static_cast<cudaStream_t>(stream.native);
    if (spec_.mode != Mode::bwd) {
      std::unordered_map<int64_t, void*> pack = forward_pack(io);
      execute(*graphs_->fwd, pack, s);
    }
    if (spec_.mode != Mode::fwd) {
      std::unordered_map<int64_t, void*> pack = backward_pack(io);
      execute(*graphs_->bwd, pack, s);
    }
  }

  int64_t workspace_bytes() const override {
    return workspace_.bytes() + seq_q_.bytes() + seq_kv_.bytes() + scalars_.bytes();
  }

  std::string note() const override {
    const Mask m = spec_.mask.simplest(spec_.q_len, spec_.kv_len);
    std::string note;
    if (m != spec_.mask) {
      note = "graph built with mask " + to_string(m) + ", which keeps the same keys as " +
             to_string(spec_.mask) + " at this shape";
    }
    if (spec_.softcap > 0 && m.kind == MaskKind::causal_tl)
      note += std::string(note.empty() ? "" : "; ") +
              "the causal mask applied inside the softcap's score modifier";
    if (const std::string amax = fp8_backward_amax(); !amax.empty())
      note += std::string(note.empty() ? "" : "; ") + amax;
    return note;
  }

 private:
  std::unordered_map<int64_t, void*> forward_pack(const Io& io) const {
    std::unordered_map<int64_t, void*> pack = {
        {kQ, io.q.data}, {kK, io.k.data}, {kV, io.v.data}, {kO, io.o.data}};
    if (io.lse.present()) pack.emplace(kStats, io.lse.data);
    // The frontend's pack holds non-const pointers; cuDNN only reads the table and lengths.
    if (io.k.paged()) pack.emplace(kPageTable, const_cast<int32_t*>(io.k.block_table));
    if (io.seq_q != nullptr) {  // a ragged batch: the harness's lengths
      pack.emplace(kSeqQ, const_cast<int32_t*>(io.seq_q));
      pack.emplace(kSeqKV, const_cast<int32_t*>(io.seq_kv));
    } else if (io.k.paged()) {
      pack.emplace(kSeqQ, seq_q_.data());
      pack.emplace(kSeqKV, seq_kv_.data());
    }
    if (io.sink.present()) pack.emplace(kSink, io.sink.data);
    add_scalars(pack,
                {kDescaleQ, kDescaleK, kDescaleV, kDescaleS, kScaleS, kScaleO, kAmaxS, kAmaxO});
    return pack;
  }
  std::unordered_map<int64_t, void*> backward_pack(const Io& io) const {
    std::unordered_map<int64_t, void*> pack = {
        {kQ, io.q.data},   {kK, io.k.data},    {kV, io.v.data},
        {kO, io.o.data},   {kDO, io.d_o.data}, {kStats, io.lse.data},
        {kDQ, io.dq.data}, {kDK, io.dk.data},  {kDV, io.dv.data}};
    add_scalars(pack, {kDescaleQ, kDescaleK, kDescaleV, kDescaleO, kDescaleDO, kDescaleS,
                       kDescaleDP, kScaleS, kScaleDQ, kScaleDK, kScaleDV, kScaleDP, kAmaxDQ,
                       kAmaxDK, kAmaxDV, kAmaxDP});
    return pack;
  }
  // fp8 backward: the largest |dP|, |dQ|, |dK|, |dV| cuDNN saw in the last launch (its amax
  // outputs, real values) against the largest each format holds at its scale, so a row shows how
  // much of the range its gradients used; "" for other points.
  std::string fp8_backward_amax() const {
    if (scalars_.data() == nullptr || spec_.mode == Mode::fwd) return "";
    std::vector<float> host(kScalarUids.size());
    ATTNPROF_CUDA(cudaMemcpy(host.data(), scalars_.data(), host.size() * sizeof(float),
                             cudaMemcpyDeviceToHost));
    const auto at = [&](Uid uid) { return host[scalar_slot(uid)]; };
    const int format = fp8_format(spec_.dtype);
    const float largest = fp8_bits_to_float(fp8_max_bits(format), format);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "fp8 backward amax: dP %.3g of %.3g, dQ %.3g, dK %.3g, dV %.3g of %.3g",
                  at(kAmaxDP), largest / dp_scale(spec_.dtype), at(kAmaxDQ), at(kAmaxDK),
                  at(kAmaxDV), largest / fp8_tensor_scale(format));
    return buf;
  }

  // fp8 only: the graph's scales, descales and amax outputs, from scalars_.
  void add_scalars(std::unordered_map<int64_t, void*>& pack,
                   std::initializer_list<Uid> uids) const {
    if (scalars_.data() == nullptr) return;
    float* f = scalars_.as<float>();
    for (Uid uid : uids) pack.emplace(uid, f + scalar_slot(uid));
  }

  // fp8 only: the scalars' order in scalars_, and each one's slot there.
  static constexpr std::array<Uid, 19> kScalarUids = {
      kDescaleQ, kDescaleK, kDescaleV,  kDescaleS,  kScaleS,  kScaleO,  kAmaxS,
      kAmaxO,    kDescaleO, kDescaleDO, kDescaleDP, kScaleDP, kScaleDQ, kScaleDK,
      kScaleDV,  kAmaxDQ,   kAmaxDK,    kAmaxDV,    kAmaxDP};
  static size_t scalar_slot(Uid uid) {
    return size_t(std::find(kScalarUids.begin(), kScalarUids.end(), uid) - kScalarUids.begin());
  }
  // fp8 only: a scalar's value. Every fp8 tensor of the harness holds its real values times
  // fp8_tensor_scale (inputs.hpp): Q, K, V, O and dO in, O, dQ, dK and dV out; P and dP are
  // cuDNN's own, at kScaleP and dp_scale. The amax outputs start at 0.
  static float fp8_scalar(Uid uid, DType t) {
    const float x = fp8_tensor_scale(fp8_format(t));
    switch (uid) {
      case kDescaleQ:
      case kDescaleK:
      case kDescaleV:
      case kDescaleO:
      case kDescaleDO:
        return 1 / x;
      case kScaleO:
      case kScaleDQ:
      case kScaleDK:
      case kScaleDV:
        return x;
      case kDescaleS:
        return 1 / kScaleP;
      case kScaleS:
        return kScaleP;
      case kDescaleDP:
        return 1 / dp_scale(t);
      case kScaleDP:
        return dp_scale(t);
      case kAmaxS:
      case kAmaxO:
      case kAmaxDQ:
      case kAmaxDK:
      case kAmaxDV:
      case kAmaxDP:
        return 0;
      default:
        throw std::logic_error("not an fp8 scalar");
    }
  }
  static std::vector<float> fp8_scalars(DType t) {
    std::vector<float> values;
    for (Uid uid : kScalarUids) values.push_back(fp8_scalar(uid, t));
    return values;
  }

  void execute(const fe::graph::Graph& g, std::unordered_map<int64_t, void*>& pack,
               cudaStream_t s) {
    cudnnStatus_t st = cudnnSetStream(handle_->get(), s);
    if (st != CUDNN_STATUS_SUCCESS) {
      throw FaultError(Fault::library, std::string("cudnnSetStream: ") + cudnnGetErrorString(st));
    }
    fe::error_t e = g.execute(handle_->get(), pack, workspace_.data());
    if (e.is_bad()) throw FaultError(Fault::library, "cuDNN execute: " + e.get_message());
  }

  Spec spec_;
  std::shared_ptr<Handle> handle_;  // shared with the provider: outlives the provider if needed
  std::shared_ptr<const Graphs> graphs_;
  DeviceBuffer workspace_;
  // Paged uniform batches only: every sequence's length, for cuDNN's padding mask (a ragged
  // batch's are the harness's, Io::seq_q and seq_kv).
  DeviceBuffer seq_q_, seq_kv_;
  DeviceBuffer scalars_;  // fp8 only: the scales and the amax outputs, one float each
};

// --- the provider --------------------------------------------------------------------------

// cudnn.sdpa: the training forward (writes the log-sum-exp, which is verified) and backward.
// cudnn.sdpa.infer: the inference forward only (no log-sum-exp), what a framework's inference
// call builds; cuDNN may pick another engine for it.
class CudnnSdpaProvider final : public Provider {
 public:
  explicit CudnnSdpaProvider(bool inference) : inference_(inference) {}

  ProviderTraits traits() const override {
    ProviderTraits t = cudnn_sdpa_traits(inference_);
    t.library_version = cudnn::cudnn_version_string();
    t.description += " (cuDNN " + t.library_version + ", frontend " +
                     std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." +
                     std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + ")";
    return t;
  }

  Fingerprint fingerprint() const override { return {{"cudnn", cudnn::cudnn_runtime_version()}}; }

  Availability availability() const override {
    std::lock_guard lock(mutex_);
    if (!availability_) availability_ = probe();
    return *availability_;
  }

  Support supports(const Spec& s, const Device& device) const override {
    if (device.kind != DeviceKind::cuda) return Support::no("cuDNN SDPA runs on CUDA devices");
    if (s.dtype == DType::fp32) return Support::no("cuDNN SDPA needs fp16, bf16 or fp8");
    if (inference_ && s.mode != Mode::fwd) {
      return Support::no(
          "cudnn.sdpa.infer is the inference forward (no log-sum-exp for a backward); "
          "cudnn.sdpa times the backward modes");
    }
    if (device.cc_major > 0 && device.cc_major < 8) {
      return Support::no("cuDNN SDPA needs sm_80 or newer (this device is sm_" +
                         std::to_string(device.cc_major) + std::to_string(device.cc_minor) + ")");
    }
    if (is_fp8(s.dtype) && device.cc_major > 0 && device.cc_major < 9) {
      return Support::no("cuDNN's fp8 SDPA needs sm_90 or newer (this device is sm_" +
                         std::to_string(device.cc_major) + std::to_string(device.cc_minor) + ")");
    }
    for (int64_t d : {s.head_dim, s.dv()}) {
      if (d > kMaxHeadDim || d % 8 != 0) {
        return Support::no("cuDNN SDPA needs head dims <= 256 and multiples of 8 (got " +
                           std::to_string(d) + ")");
      }
    }
    if (s.kv_heads <= 0 || s.q_heads % s.kv_heads != 0) {
      return Support::no("cuDNN SDPA needs q_heads to be a multiple of kv_heads");
    }
    if (s.mask.kind == MaskKind::window && s.mask.window > std::numeric_limits<int>::max()) {
      return Support::no("cuDNN's sliding window length is a 32-bit int");
    }
    if (Availability a = availability(); !a.available) return Support::no(a.reason);
    return Support::yes();
  }

  int64_t workspace_estimate(const Spec& s, const Settings&) const override {
    int64_t total = 0;
    // The backward's workspace: an fp32 dQ accumulator and two fp32 row vectors.
    if (s.mode != Mode::fwd) total += s.q_elems() * 4 + 2 * stats_elems(s) * 4;
    return total + (int64_t{1} << 20);  // small per-plan workspaces
  }

  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io& io) override {
    if (Support ok = supports(spec, device); !ok.ok) throw NotSupported(ok.reason);
    std::shared_ptr<Handle> handle = this->handle();
    return std::make_unique<CudnnSdpaRun>(spec, handle, graphs_for(spec, handle->get()), ctx, io);
  }

 private:
  Availability probe() const {
    const std::size_t version = cudnnGetVersion();
    if (version < 90000) {
      return {false, "cuDNN " + cudnn::cudnn_runtime_version() + " loaded; SDPA needs cuDNN 9"};
    }
    if (Availability a = cuda::device_availability(); !a.available) return a;
    cudnnHandle_t h = nullptr;
    if (cudnnStatus_t st = cudnnCreate(&h); st != CUDNN_STATUS_SUCCESS) {
      return {false, std::string("cudnnCreate failed: ") + cudnnGetErrorString(st)};
    }
    handle_ = std::make_shared<Handle>(h);
    return {};
  }

  std::shared_ptr<Handle> handle() {
    Availability a = availability();
    if (!a.available) throw FaultError(Fault::library, "cudnn.sdpa unavailable: " + a.reason);
    std::lock_guard lock(mutex_);
    return handle_;
  }

  // Built graphs of the most recent specs (a point prepared twice, as tests and reruns do,
  // reuses its plans). Graphs depend only on the spec's shape, never on the seed or data.
  std::shared_ptr<const Graphs> graphs_for(const Spec& spec, cudnnHandle_t h) {
    const std::string key = spec.key() + ".scale" + std::to_string(spec.softmax_scale());
    for (auto& [k, g] : cache_) {
      if (k == key) return g;
    }
    auto graphs = build_graphs(spec, !inference_, h);
    if (cache_.size() >= kCacheSize) cache_.erase(cache_.begin());
    cache_.emplace_back(key, graphs);
    return graphs;
  }

  static constexpr std::size_t kCacheSize = 8;
  bool inference_;
  mutable std::mutex mutex_;
  mutable std::optional<Availability> availability_;
  mutable std::shared_ptr<Handle> handle_;  // created by the availability probe
  std::vector<std::pair<std::string, std::shared_ptr<const Graphs>>> cache_;
};

}  // namespace

std::unique_ptr<Provider> make_cudnn_sdpa() {
  return std::make_unique<CudnnSdpaProvider>(false);
}

std::unique_ptr<Provider> make_cudnn_sdpa_infer() {
  return std::make_unique<CudnnSdpaProvider>(true);
}

}  // namespace attnprof
