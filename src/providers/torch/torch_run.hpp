// The prepared point of a LibTorch provider. Q, K, V (and dO) are the harness's tensors, wrapped
// without a copy (at::from_blob) for every set the harness binds (copy 0, and the copies cold
// timing rotates through); the subclass supplies the forward (SDPA with one backend, or the naive
// recipe) and this class runs the spec's mode around it:
//   fwd      O = forward(), no autograd graph (inputs do not require grad)
//   bwd      the forward runs once per bound set with grad, untimed, on the launch stream; each
//            launch is autograd's backward over that graph (retain_graph), writing dQ, dK, dV
//   fwd_bwd  each launch runs the forward with grad and the backward
// Every launch runs under a stream guard over the engine's stream, so ATen's kernels (and the
// autograd engine's backward, which follows the forward's stream) run on the timed stream.
// PyTorch allocates the outputs itself (SDPA has no out= form): before a launch the previous
// outputs are released, so the caching allocator hands the same blocks back; publish() copies
// the last launch's outputs into the harness's, untimed, for the verifier. Memory: the harness's
// tensors (tracked by the engine) plus the caching allocator's peak since prepare less the
// outputs PyTorch allocates (the harness's output buffers stand for them).
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attnprof/provider.hpp"

namespace attnprof::torchp {

class TorchRun : public Run {
 public:
  TorchRun(const Spec& spec, const Device& device, const PrepareContext& ctx, const Io& io);
  ~TorchRun() override;

  void bind(std::span<const Io> sets) override;
  void launch(Stream& stream, const Io& io) override;
  void publish(Stream& stream, const Io& io) override;
  int64_t workspace_bytes() const override;
  // The allocator's peak less the outputs PyTorch allocates itself: the harness's output buffers
  // (tracked) stand for those, so an output is counted once.
  int64_t untracked_peak_bytes() const override { return workspace_bytes(); }
  std::string note() const override;

 protected:
  // O as a (B, Hq, Nq, Dv) tensor from (B, H, S, D) views of Q, K, V on the current stream.
  virtual at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) = 0;
  // What the subclass adds to the note (e.g. the backend ATen chose).
  virtual std::string forward_note() const = 0;

  const Spec& spec() const { return spec_; }
  // (B, H, S, D) views of copy 0's inputs, whatever the spec's layout (to ask ATen about them).
  const at::Tensor& q() const { return sets_.front().q; }
  const at::Tensor& k() const { return sets_.front().k; }
  const at::Tensor& v() const { return sets_.front().v; }
  // The keys each query may see as a (Nq, Nk) bool tensor (true: visible), built on first
  // use and kept (a real model builds its mask once, too); only for masks that
  // needs_explicit_mask() says cannot be said with is_causal alone.
  const at::Tensor& keep_mask();
  // Whether the spec's mask is exactly is_causal (top-left) or no mask at all for these
  // lengths (Mask::simplest); otherwise the forward needs keep_mask().
  bool mask_is_none() const { return simplest_mask().kind == MaskKind::none; }
  bool mask_is_causal() const { return simplest_mask().kind == MaskKind::causal_tl; }
  bool needs_explicit_mask() const { return !mask_is_none() && !mask_is_causal(); }
  Mask simplest_mask() const { return spec_.mask.simplest(spec_.q_len, spec_.kv_len); }

 private:
  // One bound set: the harness's memory as tensors, and (mode bwd) the graph's root.
  struct Set {
    const void* q_data = nullptr;          // to find a launch's set
    at::Tensor q_store, k_store, v_store;  // in the spec's layout (leaves that require grad)
    at::Tensor q, k, v, d_o;               // (B, H, S, D) views
    at::Tensor o;                          // mode bwd: the forward's output, the graph's root
  };
  Set wrap(const Io& io) const;
  Set& set_of(const Io& io);
  void run_mode(Set& s);   // one launch of the mode's work on the current stream
  void release_outputs();  // drops the last outputs (their blocks go back to the pool)
  // The most the run has held: the allocator's peak since its last reset, less what was there
  // before prepare. Read when asked, not per launch.
  int64_t peak_bytes() const;
  void reset_peak();

  Spec spec_;
  int device_index_ = 0;
  cudaStream_t stream_ = nullptr;  // the engine's: every launch and the bwd forwards run there
  int64_t base_bytes_ = 0;         // the caching allocator's allocated bytes before prepare
  std::vector<Set> sets_;
  std::optional<at::Tensor> keep_mask_;
  at::Tensor o_;                   // the last launch's O (B, Hq, Nq, Dv): fwd and fwd_bwd
  std::vector<at::Tensor> grads_;  // the last launch's dQ, dK, dV, in the spec's layout
};

}  // namespace attnprof::torchp
