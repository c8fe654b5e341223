#include "measure/cuda/device_tensors.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attnprof/paging.hpp"
#include "attnprof/ragged.hpp"
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

// Rows of `t` (each `t.dim` elements from a flat index in `firsts`) appended to `to` as floats,
// consecutive rows in one copy; `at` maps each row's first index to where it lies in `to`.
void read_row_runs(const TensorView& t, std::vector<int64_t> firsts, std::vector<float>& to,
                   std::unordered_map<int64_t, size_t>& at) {
  std::sort(firsts.begin(), firsts.end());
  firsts.erase(std::unique(firsts.begin(), firsts.end()), firsts.end());
  const auto* base = static_cast<const char*>(t.data);
  const auto elem = static_cast<int64_t>(dtype_bytes(t.storage));
  for (size_t a = 0; a < firsts.size();) {
    size_t e = a + 1;
    while (e < firsts.size() && firsts[e] == firsts[e - 1] + t.dim) ++e;
    const int64_t n = int64_t(e - a) * t.dim;
    const std::vector<float> run = to_host_float(base + firsts[a] * elem, n, t.storage, nullptr);
    for (size_t r = a; r < e; ++r) at[firsts[r]] = to.size() + (r - a) * size_t(t.dim);
    to.insert(to.end(), run.begin(), run.end());
    a = e;
  }
}

class DeviceTensors final : public PointTensors {
 public:
  DeviceTensors(const Spec& spec, bool lse, const InputFill& fill, MemoryTracker* tracker)
      : spec_(spec) {
    first_ = allocate_set(io_layout(spec, spec.dtype, lse), tracker);
    const std::vector<int32_t> table = block_table(spec, fill.seed);
    if (!table.empty()) {
      table_ = DeviceBuffer(static_cast<int64_t>(table.size() * sizeof(int32_t)), tracker);
      ATTNPROF_CUDA(cudaMemcpy(table_.data(), table.data(), table.size() * sizeof(int32_t),
                               cudaMemcpyHostToDevice));
      for (TensorRole r : {TensorRole::k, TensorRole::v}) {
        first_.io[r].block_table = static_cast<const int32_t*>(table_.data());
        // The last page's tail (paging.hpp kPageTailValue); the fill below writes every key.
        fill_constant(first_.io[r].data, first_.io[r].elems(), spec.dtype, kPageTailValue, nullptr);
      }
    }
    if (spec.ragged()) {  // per sequence its query rows, then its keys (Io::seq_q, seq_kv)
      const SeqLens l = seq_lens(spec);
      std::vector<int32_t> lens(l.q.begin(), l.q.end());
      lens.insert(lens.end(), l.kv.begin(), l.kv.end());
      lens_ = DeviceBuffer(static_cast<int64_t>(lens.size() * sizeof(int32_t)), tracker);
      ATTNPROF_CUDA(cudaMemcpy(lens_.data(), lens.data(), lens.size() * sizeof(int32_t),
                               cudaMemcpyHostToDevice));
      first_.io.seq_q = static_cast<const int32_t*>(lens_.data());
      first_.io.seq_kv = first_.io.seq_q + spec.batch;
    }
    // Filled on the legacy default stream and synchronized, so any launch stream sees them.
    for (TensorRole r : {TensorRole::q, TensorRole::k, TensorRole::v, TensorRole::d_o}) {
      if (!first_.io[r].present()) continue;
      const bool kv = r == TensorRole::k || r == TensorRole::v;
      fill_input(first_.io[r].data, spec, static_cast<TensorId>(r), fill.seed, fill.pattern,
                 nullptr, first_.io[r].block_table, kv ? first_.io.seq_kv : nullptr);
    }
    if (first_.io.sink.present()) {  // the sink logits: a few fp32 values, from the host
      std::vector<float> sinks(static_cast<size_t>(spec.q_heads));
      for (int64_t h = 0; h < spec.q_heads; ++h)
        sinks[size_t(h)] = sink_logit(fill.pattern, fill.seed, h);
      ATTNPROF_CUDA(cudaMemcpy(first_.io.sink.data, sinks.data(), sinks.size() * sizeof(float),
                               cudaMemcpyHostToDevice));
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

  HostOutputs read_rows(const std::vector<RowIndex>& rows,
                        const std::vector<int64_t>& groups) override {
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    HostOutputs out;
    for (TensorRole r : launch_outputs(spec_, first_.io)) {
      const TensorView& t = first_.io[r];
      std::vector<int64_t> firsts;
      if (r == TensorRole::dk || r == TensorRole::dv) {
        for (int64_t g : groups) {
          for (int64_t j = 0; j < t.len; ++j)
            firsts.push_back(t.offset(g / t.heads, g % t.heads, j));
        }
      } else {
        for (const RowIndex& i : rows) firsts.push_back(t.offset(i.b, i.h, i.i));
      }
      read_row_runs(t, std::move(firsts), *out.slot(r), out.held[r]);
    }
    return out;
  }

  int64_t bytes() const override {
    return tensor_bytes(first_.io) + table_.bytes() + lens_.bytes();
  }

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
  DeviceBuffer table_;  // a paged spec's block table, shared by every copy
  DeviceBuffer lens_;   // a ragged spec's lengths (Io::seq_q, seq_kv), shared by every copy
  Set first_;
  std::vector<Set> copies_;
};

}  // namespace

std::unique_ptr<PointTensors> make_device_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                  MemoryTracker* tracker) {
  return std::make_unique<DeviceTensors>(spec, lse, fill, tracker);
}

}  // namespace attnprof::cuda
