#include "providers/torch/torch_run.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <stdexcept>

#include "cuda/cuda_check.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof::torchp {

namespace {

at::ScalarType scalar_type(DType t) {
  switch (t) {
    case DType::fp32:
      return at::kFloat;
    case DType::fp16:
      return at::kHalf;
    case DType::bf16:
      return at::kBFloat16;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      break;  // the runner refuses fp8 points to providers without the fp8 trait
  }
  throw std::logic_error("scalar_type: no torch dtype for " + std::string(to_string(t)));
}

// The caching allocator's allocated bytes on `device`: now, or the peak since the last reset.
int64_t allocator_bytes(int device, bool peak) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  const auto& s =
      stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
  return peak ? s.peak : s.current;
}

// The harness's tensor as a tensor in its storage layout ((B, S, H, D) for bshd), no copy.
at::Tensor stored(const TensorView& t, int device) {
  const auto options = at::TensorOptions().dtype(scalar_type(t.storage)).device(at::kCUDA, device);
  if (t.layout == Layout::bshd)
    return at::from_blob(t.data, {t.batch, t.len, t.heads, t.dim}, options);
  return at::from_blob(t.data, {t.batch, t.heads, t.len, t.dim}, options);
}

// The (B, H, S, D) view of a tensor stored in `layout`.
at::Tensor bhsd_view(const at::Tensor& stored, Layout layout) {
  return layout == Layout::bshd ? stored.transpose(1, 2) : stored;
}

cudaStream_t native(const Stream* s) {
  return s ? static_cast<cudaStream_t>(s->native) : nullptr;
}

}  // namespace

TorchRun::TorchRun(const Spec& spec, const Device& device, const PrepareContext& ctx, const Io& io)
    : spec_(spec), device_index_(device.index), stream_(native(ctx.stream)) {
  // PyTorch sets up CUDA (and its caching allocator) on first use; its statistics are read
  // before any tensor of this run exists.
  at::globalContext().lazyInitDevice(at::kCUDA);
  const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_index_));
  base_bytes_ = allocator_bytes(device_index_, false);
  reset_peak();
  sets_.push_back(wrap(io));  // copy 0, for ATen's questions before bind()
}

TorchRun::~TorchRun() {
  // The caching allocator may hand these blocks to other work at once: let ours finish first.
  if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
  // Then give the device its memory back. The allocator keeps freed blocks reserved, and other
  // providers run in other processes: a point of torch.sdpa.math that peaked at 73 GiB left
  // that much reserved, and the next points of cuda.naive ran out of memory (H200, fa-bench).
  // The derived runs' tensors are gone by now; drop this run's, then empty the cache.
  o_ = at::Tensor();
  grads_.clear();
  keep_mask_.reset();
  sets_.clear();
  try {
    c10::cuda::CUDACachingAllocator::emptyCache();
  } catch (const std::exception&) {  // a destructor must not throw; the next run still works
  }
}

TorchRun::Set TorchRun::wrap(const Io& io) const {
  Set s;
  s.q_data = io.q.data;
  s.q_store = stored(io.q, device_index_);
  s.k_store = stored(io.k, device_index_);
  s.v_store = stored(io.v, device_index_);
  if (spec_.mode != Mode::fwd) {
    for (at::Tensor* t : {&s.q_store, &s.k_store, &s.v_store}) t->requires_grad_(true);
    s.d_o = bhsd_view(stored(io.d_o, device_index_), spec_.layout);
  }
  s.q = bhsd_view(s.q_store, spec_.layout);
  s.k = bhsd_view(s.k_store, spec_.layout);
  s.v = bhsd_view(s.v_store, spec_.layout);
  return s;
}

void TorchRun::bind(std::span<const Io> sets) {
  const c10::cuda::CUDAGuard device_guard(static_cast<c10::DeviceIndex>(device_index_));
  const c10::cuda::CUDAStreamGuard guard(
      c10::cuda::getStreamFromExternal(stream_, static_cast<c10::DeviceIndex>(device_index_)));
  release_outputs();
  sets_.clear();
  for (const Io& io : sets) {
    sets_.push_back(wrap(io));
    // Mode bwd: the forward with grad, untimed, on the launch stream (autograd runs the backward
    // on the forward's stream).
    if (spec_.mode == Mode::bwd) {
      try {
        sets_.back().o = forward(sets_.back().q, sets_.back().k, sets_.back().v);
      } catch (const c10::OutOfMemoryError& e) {
        throw OutOfMemory(e.what_without_backtrace());
      }
    }
  }
  ATTNPROF_CUDA(cudaStreamSynchronize(stream_));
}

TorchRun::Set& TorchRun::set_of(const Io& io) {
  for (Set& s : sets_) {
    if (s.q_data == io.q.data) return s;
  }
  throw std::logic_error("launch on a set of tensors that was never bound (Run::bind)");
}

const at::Tensor& TorchRun::keep_mask() {
  if (!keep_mask_) {
    const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_index_));
    const auto opts = at::TensorOptions().dtype(at::kLong).device(at::kCUDA, device_index_);
    const int64_t nq = spec_.q_len, nk = spec_.kv_len;
    const at::Tensor i = at::arange(nq, opts).unsqueeze(1);
    const at::Tensor j = at::arange(nk, opts).unsqueeze(0);
    const int64_t off = spec_.mask.diagonal_offset(nq, nk);
    at::Tensor keep = j.le(i + off);
    if (spec_.mask.kind == MaskKind::window)
      keep = keep.logical_and(j.gt(i + off - spec_.mask.window));
    keep_mask_ = keep.contiguous();
    ATTNPROF_CUDA(cudaStreamSynchronize(nullptr));
  }
  return *keep_mask_;
}

void TorchRun::run_mode(Set& s) {
  switch (spec_.mode) {
    case Mode::fwd:
      o_ = forward(s.q, s.k, s.v);
      return;
    case Mode::bwd:
      grads_ = torch::autograd::grad({s.o}, {s.q_store, s.k_store, s.v_store}, {s.d_o},
                                     /*retain_graph=*/true);
      return;
    case Mode::fwd_bwd:
      o_ = forward(s.q, s.k, s.v);
      grads_ = torch::autograd::grad({o_}, {s.q_store, s.k_store, s.v_store}, {s.d_o},
                                     /*retain_graph=*/false);
      return;
  }
}

void TorchRun::release_outputs() {
  grads_.clear();
  o_ = at::Tensor();
}

void TorchRun::launch(Stream& stream, const Io& io) {
  const auto s = static_cast<cudaStream_t>(stream.native);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  ATTNPROF_CUDA(cudaStreamIsCapturing(s, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    throw NotSupported(
        "LibTorch providers are not captured into CUDA graphs here (PyTorch's caching "
        "allocator must be told about a capture: torch.cuda.graph); use --timing cold, hot or "
        "wall");
  }
  if (s != stream_) {
    throw std::logic_error(
        "a LibTorch run launches on the stream it was prepared for (its autograd graphs and "
        "allocator blocks belong to it)");
  }
  Set& set = set_of(io);
  const c10::cuda::CUDAStreamGuard guard(
      c10::cuda::getStreamFromExternal(s, static_cast<c10::DeviceIndex>(device_index_)));
  release_outputs();
  try {
    run_mode(set);
  } catch (const c10::OutOfMemoryError& e) {
    // The caching allocator could not get the memory: the point's oom, not a provider failure.
    throw OutOfMemory(e.what_without_backtrace());
  }
}

void TorchRun::publish(Stream&, const Io& io) {
  const c10::cuda::CUDAGuard device_guard(static_cast<c10::DeviceIndex>(device_index_));
  const c10::cuda::CUDAStreamGuard guard(
      c10::cuda::getStreamFromExternal(stream_, static_cast<c10::DeviceIndex>(device_index_)));
  const c10::NoGradGuard no_grad;  // the copies below allocate nothing and record no graph
  if (spec_.mode != Mode::bwd && o_.defined()) {
    bhsd_view(stored(io.o, device_index_), spec_.layout).copy_(o_);
  }
  if (spec_.mode != Mode::fwd && grads_.size() == 3) {
    stored(io.dq, device_index_).copy_(grads_[0]);
    stored(io.dk, device_index_).copy_(grads_[1]);
    stored(io.dv, device_index_).copy_(grads_[2]);
  }
  ATTNPROF_CUDA(cudaStreamSynchronize(stream_));
}

int64_t TorchRun::workspace_bytes() const {
  // Everything the allocator held beyond the outputs PyTorch allocates itself.
  const auto esize = static_cast<int64_t>(dtype_bytes(spec_.dtype));
  int64_t outputs = 0;
  if (spec_.mode != Mode::bwd) outputs += spec_.o_elems() * esize;
  if (spec_.mode != Mode::fwd)
    outputs += (spec_.q_elems() + spec_.k_elems() + spec_.v_elems()) * esize;
  return std::max<int64_t>(0, peak_bytes() - outputs);
}

std::string TorchRun::note() const {
  const std::string more = forward_note();
  return "PyTorch " + torch_version() + (more.empty() ? "" : "; " + more);
}

int64_t TorchRun::peak_bytes() const {
  return std::max<int64_t>(0, allocator_bytes(device_index_, true) - base_bytes_);
}

void TorchRun::reset_peak() {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device_index_));
}

}  // namespace attnprof::torchp
