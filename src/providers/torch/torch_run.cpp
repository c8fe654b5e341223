#include "providers/torch/torch_run.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <stdexcept>

#include "measure/cuda/cuda_check.hpp"
#include "providers/cuda/cuda_tensors.hpp"
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
  }
  throw std::logic_error("scalar_type: unknown dtype");
}

// The caching allocator's allocated bytes on `device`: now, or the peak since the last reset.
int64_t allocator_bytes(int device, bool peak) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  const auto& s =
      stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
  return peak ? s.peak : s.current;
}

// A tensor of `heads` x `len` x `dim` per batch, stored in the spec's layout.
at::Tensor stored(const Spec& s, int64_t heads, int64_t len, int64_t dim, int device) {
  const auto options = at::TensorOptions().dtype(scalar_type(s.dtype)).device(at::kCUDA, device);
  if (s.layout == Layout::bshd) return at::empty({s.batch, len, heads, dim}, options);
  return at::empty({s.batch, heads, len, dim}, options);
}

// The (B, H, S, D) view of a tensor stored in `layout`, and back to the layout, contiguous.
at::Tensor bhsd_view(const at::Tensor& stored, Layout layout) {
  return layout == Layout::bshd ? stored.transpose(1, 2) : stored;
}
at::Tensor in_layout(const at::Tensor& bhsd, Layout layout) {
  return (layout == Layout::bshd ? bhsd.transpose(1, 2) : bhsd).contiguous();
}

// A contiguous device tensor as float on the host (synchronous on the current stream).
std::vector<float> host_floats(const at::Tensor& t) {
  const at::Tensor h = t.detach().to(at::kCPU).to(at::kFloat).contiguous();
  const float* p = h.data_ptr<float>();
  return std::vector<float>(p, p + h.numel());
}

void poison(const at::Tensor& t, cudaStream_t stream) {
  if (t.defined()) cuda::poison(t.data_ptr(), static_cast<int64_t>(t.nbytes()), stream);
}

}  // namespace

TorchRun::TorchRun(const Spec& spec, const Device& device, const PrepareContext& ctx)
    : spec_(spec), device_index_(device.index) {
  // PyTorch sets up CUDA (and its caching allocator) on first use; its statistics are read
  // before any tensor exists here.
  at::globalContext().lazyInitDevice(at::kCUDA);
  const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_index_));
  base_bytes_ = allocator_bytes(device_index_, false);
  reset_peak();
  const bool backward = spec.mode != Mode::fwd;
  q_store_ = stored(spec, spec.q_heads, spec.q_len, spec.head_dim, device_index_);
  k_store_ = stored(spec, spec.kv_heads, spec.kv_len, spec.head_dim, device_index_);
  v_store_ = stored(spec, spec.kv_heads, spec.kv_len, spec.dv(), device_index_);
  // Filled on the legacy default stream (PyTorch's current stream here) and synchronized.
  cudaStream_t fill = nullptr;
  cuda::fill_input(q_store_.data_ptr(), spec, TensorId::q, ctx.seed, ctx.pattern, fill);
  cuda::fill_input(k_store_.data_ptr(), spec, TensorId::k, ctx.seed, ctx.pattern, fill);
  cuda::fill_input(v_store_.data_ptr(), spec, TensorId::v, ctx.seed, ctx.pattern, fill);
  if (backward) {
    do_store_ = stored(spec, spec.q_heads, spec.q_len, spec.dv(), device_index_);
    cuda::fill_input(do_store_.data_ptr(), spec, TensorId::d_o, ctx.seed, ctx.pattern, fill);
    for (at::Tensor* t : {&q_store_, &k_store_, &v_store_}) t->requires_grad_(true);
  }
  ATTNPROF_CUDA(cudaStreamSynchronize(fill));
  q_ = bhsd_view(q_store_, spec.layout);
  k_ = bhsd_view(k_store_, spec.layout);
  v_ = bhsd_view(v_store_, spec.layout);
  if (backward) do_ = bhsd_view(do_store_, spec.layout);
  for (const at::Tensor* t : {&q_store_, &k_store_, &v_store_, &do_store_}) {
    if (t->defined()) input_bytes_ += static_cast<int64_t>(t->nbytes());
  }
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
  q_ = k_ = v_ = do_ = at::Tensor();
  q_store_ = k_store_ = v_store_ = do_store_ = at::Tensor();
  try {
    c10::cuda::CUDACachingAllocator::emptyCache();
  } catch (const std::exception&) {  // a destructor must not throw; the next run still works
  }
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

void TorchRun::run_mode() {
  switch (spec_.mode) {
    case Mode::fwd:
      o_ = forward();
      return;
    case Mode::bwd:
      grads_ = torch::autograd::grad({o_}, {q_store_, k_store_, v_store_}, {do_},
                                     /*retain_graph=*/true);
      return;
    case Mode::fwd_bwd:
      o_ = forward();
      grads_ = torch::autograd::grad({o_}, {q_store_, k_store_, v_store_}, {do_},
                                     /*retain_graph=*/false);
      return;
  }
}

void TorchRun::release_outputs() {
  grads_.clear();
  if (spec_.mode != Mode::bwd) o_ = at::Tensor();  // in bwd, O is the graph's root: kept
}

void TorchRun::launch(Stream& stream) {
  const auto s = static_cast<cudaStream_t>(stream.native);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  ATTNPROF_CUDA(cudaStreamIsCapturing(s, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    throw NotSupported(
        "LibTorch providers are not captured into CUDA graphs here (PyTorch's caching "
        "allocator must be told about a capture: torch.cuda.graph); use --timing cold, hot or "
        "wall");
  }
  if (stream_ != nullptr && s != stream_) {
    throw std::runtime_error(
        "a LibTorch run launches on one stream (its autograd graph and allocator blocks belong "
        "to it)");
  }
  stream_ = s;
  const c10::cuda::CUDAStreamGuard guard(
      c10::cuda::getStreamFromExternal(s, static_cast<c10::DeviceIndex>(device_index_)));
  if (!settled_) {
    // Untimed, on this stream: bwd's forward with grad (autograd runs the backward on the
    // forward's stream), then one pass whose outputs are poisoned, so the blocks the next
    // pass gets back from the allocator hold NaN.
    if (spec_.mode == Mode::bwd) o_ = forward();
    run_mode();
    settled_ = true;
    poison_outputs();
  }
  release_outputs();
  run_mode();
}

void TorchRun::poison_outputs() {
  if (stream_ == nullptr) return;  // nothing launched yet: no outputs exist
  if (spec_.mode != Mode::bwd) poison(o_, stream_);
  for (const at::Tensor& g : grads_) poison(g, stream_);
  ATTNPROF_CUDA(cudaStreamSynchronize(stream_));
}

HostOutputs TorchRun::read_outputs() {
  // What the launches so far held, before the copies below add the verifier's.
  peak_bytes_ = peak_bytes();
  const c10::cuda::CUDAGuard device_guard(static_cast<c10::DeviceIndex>(device_index_));
  std::optional<c10::cuda::CUDAStreamGuard> stream_guard;
  if (stream_ != nullptr) {
    stream_guard.emplace(
        c10::cuda::getStreamFromExternal(stream_, static_cast<c10::DeviceIndex>(device_index_)));
  }
  HostOutputs out;
  if (spec_.mode != Mode::bwd && o_.defined()) out.o = host_floats(in_layout(o_, spec_.layout));
  if (spec_.mode != Mode::fwd && grads_.size() == 3) {
    out.dq = host_floats(grads_[0].contiguous());
    out.dk = host_floats(grads_[1].contiguous());
    out.dv = host_floats(grads_[2].contiguous());
  }
  // The copies just made are the verifier's, not the point's: the allocator's peak starts over.
  reset_peak();
  return out;
}

int64_t TorchRun::workspace_bytes() const {
  const auto esize = static_cast<int64_t>(dtype_bytes(spec_.dtype));
  int64_t outputs = 0;
  if (spec_.mode != Mode::bwd) outputs += spec_.o_elems() * esize;
  if (spec_.mode != Mode::fwd)
    outputs += (spec_.q_elems() + spec_.k_elems() + spec_.v_elems()) * esize;
  return std::max<int64_t>(0, peak_bytes() - input_bytes_ - outputs);
}

std::string TorchRun::note() const {
  const std::string more = forward_note();
  return "PyTorch " + torch_version() + (more.empty() ? "" : "; " + more);
}

int64_t TorchRun::peak_bytes() const {
  return std::max(peak_bytes_, allocator_bytes(device_index_, true) - base_bytes_);
}

void TorchRun::reset_peak() {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device_index_));
}

}  // namespace attnprof::torchp
