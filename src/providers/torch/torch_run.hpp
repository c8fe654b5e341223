// The prepared point of a LibTorch provider. Q, K, V (and dO) come from PyTorch's caching
// allocator and are filled on the device by attnprof's generator (bit-identical to the host's
// reference inputs); the subclass supplies the forward (SDPA with one backend, or the naive
// recipe) and this class runs the spec's mode around it:
//   fwd      O = forward(), no autograd graph (inputs do not require grad)
//   bwd      the forward runs once with grad, untimed; each launch is autograd's backward over
//            that graph (retain_graph), writing dQ, dK, dV
//   fwd_bwd  each launch runs the forward with grad and the backward
// Every launch runs under a stream guard over the engine's stream, so ATen's kernels (and the
// autograd engine's backward, which follows the forward's stream) run on the timed stream.
// PyTorch allocates the outputs itself: before a launch the previous outputs are released,
// so the caching allocator hands the same blocks back; poison_outputs() fills them with NaN
// first, which is what the verifier scans for. Memory is the caching allocator's peak of
// allocated bytes since prepare (inputs included), the verifier's host copies excluded.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <vector>

#include "attnprof/provider.hpp"

namespace attnprof::torchp {

class TorchRun : public Run {
 public:
  TorchRun(const Spec& spec, const Device& device, const PrepareContext& ctx);
  ~TorchRun() override;

  void poison_outputs() override;
  void launch(Stream& stream) override;
  HostOutputs read_outputs() override;
  int64_t workspace_bytes() const override;
  int64_t allocated_bytes() const override { return peak_bytes(); }
  int64_t untracked_peak_bytes() const override { return peak_bytes(); }
  std::string note() const override;

 protected:
  // O as a (B, Hq, Nq, Dv) tensor from q(), k(), v() on the current stream.
  virtual at::Tensor forward() = 0;
  // What the subclass adds to the note (e.g. the backend ATen chose).
  virtual std::string forward_note() const = 0;

  const Spec& spec() const { return spec_; }
  // (B, H, S, D) views of the inputs, whatever the spec's layout.
  const at::Tensor& q() const { return q_; }
  const at::Tensor& k() const { return k_; }
  const at::Tensor& v() const { return v_; }
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
  void run_mode();         // one launch of the mode's work on the current stream
  void release_outputs();  // drops O and the gradients (their blocks go back to the pool)
  // The most the run has held: the allocator's peak since its last reset (prepare or
  // read_outputs(), which folds the peak before it into peak_bytes_), less what was there
  // before prepare. Read when asked, not per launch.
  int64_t peak_bytes() const;
  void reset_peak();

  Spec spec_;
  int device_index_ = 0;
  int64_t base_bytes_ = 0;  // the caching allocator's allocated bytes before prepare
  int64_t peak_bytes_ = 0;  // the peak up to the last read_outputs()
  int64_t input_bytes_ = 0;
  at::Tensor q_store_, k_store_, v_store_, do_store_;  // in the spec's layout
  at::Tensor q_, k_, v_, do_;                          // (B, H, S, D) views
  std::optional<at::Tensor> keep_mask_;
  at::Tensor o_;                   // (B, Hq, Nq, Dv)
  std::vector<at::Tensor> grads_;  // dQ, dK, dV, in the spec's layout
  cudaStream_t stream_ = nullptr;  // the stream of the first launch: all launch there
  bool settled_ = false;           // the untimed first pass on stream_ has run
};

}  // namespace attnprof::torchp
