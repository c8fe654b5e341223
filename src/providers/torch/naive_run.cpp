// torch.naive: attention as a PyTorch user writes it by hand (and as bench/torch_crosscheck.py
// times it): S = scale * Q K^T, masked_fill of the hidden keys with -inf, softmax, P V, in the
// input dtype, scores materialized. GQA without copying K and V: a group's query heads are
// adjacent, so each group is one (g * Nq) x D matrix against its K/V head.
#include <ATen/ATen.h>

#include <limits>

#include "providers/torch/torch_provider.hpp"
#include "providers/torch/torch_run.hpp"

namespace attnprof::torchp {
namespace {

class NaiveRun final : public TorchRun {
 public:
  NaiveRun(const Spec& spec, const Device& device, const PrepareContext& ctx, const Io& io)
      : TorchRun(spec, device, ctx, io) {
    // Every mask that hides something, top-left causal included, as a (Nq, Nk) hidden-key
    // tensor built once here (a model caches it too).
    if (!mask_is_none()) hidden_ = keep_mask().logical_not();
  }

 protected:
  at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) override {
    const Spec& s = spec();
    const int64_t b = s.batch, hq = s.q_heads, hkv = s.kv_heads, g = hq / hkv;
    const int64_t nq = s.q_len, nk = s.kv_len, d = s.head_dim;
    const at::Tensor queries = g > 1 ? q.reshape({b, hkv, g * nq, d}) : q;
    at::Tensor scores = at::matmul(queries, k.transpose(-2, -1));
    scores = scores.mul(s.softmax_scale()).view({b, hq, nq, nk});
    if (hidden_) scores = scores.masked_fill(*hidden_, -std::numeric_limits<double>::infinity());
    const at::Tensor p = at::softmax(scores, -1);
    if (g > 1) return at::matmul(p.view({b, hkv, g * nq, nk}), v).view({b, hq, nq, s.dv()});
    return at::matmul(p, v);
  }
  std::string forward_note() const override {
    return hidden_ ? "mask as a (Nq, Nk) bool tensor, masked_fill before the softmax" : "";
  }

 private:
  std::optional<at::Tensor> hidden_;
};

}  // namespace

std::unique_ptr<Run> prepare_naive(const Spec& spec, const Device& device,
                                   const PrepareContext& ctx, const Io& io) {
  return std::make_unique<NaiveRun>(spec, device, ctx, io);
}

}  // namespace attnprof::torchp
