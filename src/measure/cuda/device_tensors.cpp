#include "measure/cuda/device_tensors.hpp"

#include <cuda_runtime.h>

#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/tensor_fill.hpp"

namespace attnprof::cuda {

namespace {

// One set of tensors: a buffer per present role.
struct Set {
  Io io;
  std::vector<DeviceBuffer> buffers;
};

Set allocate_set(const Io& layout, MemoryTracker* tracker) {
  Set s;
  s.io = layout;
  for (TensorRole r : kTensorRoles) {
    TensorView& t = s.io[r];
    if (t.elems() == 0) continue;
    s.buffers.emplace_back(t.bytes(), tracker);
    t.data = s.buffers.back().data();
  }
  return s;
}

class DeviceTensors final : public PointTensors {
 public:
  DeviceTensors(const Spec& spec, bool lse, const InputFill& fill, MemoryTracker* tracker)
      : spec_(spec) {
    first_ = allocate_set(io_layout(spec, spec.dtype, lse), tracker);
    // Filled on the legacy default stream and synchronized, so any launch stream sees them.
    for (TensorRole r : {TensorRole::q, TensorRole::k, TensorRole::v, TensorRole::d_o}) {
      if (!first_.io[r].present()) continue;
      fill_input(first_.io[r].data, spec, static_cast<TensorId>(r), fill.seed, fill.pattern,
                 nullptr);
    }
    poison_outputs();
  }

  const Io& io() const override { return first_.io; }

  void poison_outputs() override {
    // Waits for outstanding work first, so that a launch still in flight cannot overwrite it.
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    for (TensorRole r : launch_outputs(spec_, first_.io)) {
      poison(first_.io[r].data, first_.io[r].bytes(), nullptr);
    }
    ATTNPROF_CUDA(cudaStreamSynchronize(nullptr));
  }

  HostOutputs read_outputs() override {
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    HostOutputs out;
    for (TensorRole r : launch_outputs(spec_, first_.io)) {
      const TensorView& t = first_.io[r];
      *out.slot(r) = to_host_float(t.data, t.elems(), t.storage, nullptr);
    }
    return out;
  }

  int64_t bytes() const override { return tensor_bytes(first_.io); }

  std::vector<Io> replicate(int copies) override {
    copies_.clear();
    std::vector<Io> sets = {first_.io};
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    for (int c = 1; c < copies; ++c) {
      // Untracked: a measurement device, not the point's footprint.
      Set& s = copies_.emplace_back(allocate_set(first_.io, nullptr));
      for (TensorRole r : launch_inputs(spec_, first_.io)) {
        ATTNPROF_CUDA(cudaMemcpyAsync(s.io[r].data, first_.io[r].data,
                                      static_cast<size_t>(first_.io[r].bytes()),
                                      cudaMemcpyDeviceToDevice, nullptr));
      }
      sets.push_back(s.io);
    }
    ATTNPROF_CUDA(cudaStreamSynchronize(nullptr));
    return sets;
  }

 private:
  Spec spec_;
  Set first_;
  std::vector<Set> copies_;
};

}  // namespace

std::unique_ptr<PointTensors> make_device_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                  MemoryTracker* tracker) {
  return std::make_unique<DeviceTensors>(spec, lse, fill, tracker);
}

}  // namespace attnprof::cuda
