#include "measure/cuda/device_tensors.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attnprof/audit.hpp"
#include "attnprof/digest.hpp"
#include "attnprof/paging.hpp"
#include "attnprof/ragged.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/tensor_audit.hpp"
#include "cuda/tensor_fill.hpp"

namespace attnprof::cuda {

namespace {

// Where the guard bytes after tensor `t` begin.
void* guard_of(const TensorView& t) {
  return static_cast<char*>(t.data) + t.bytes();
}

// One set of tensors: a buffer per present role.
struct Set {
  Io io;
  std::vector<DeviceBuffer> buffers;
};

// Every tensor is followed by kGuardBytes of kGuardByte (attnprof/digest.hpp), untracked.
Set allocate_set(const Io& layout, MemoryTracker* tracker) {
  Set s;
  s.io = layout;
  for (TensorRole r : kTensorRoles) {
    TensorView& t = s.io[r];
    if (t.elems() == 0) continue;
    s.buffers.emplace_back(t.bytes(), tracker, kGuardBytes);
    t.data = s.buffers.back().data();
    ATTNPROF_CUDA(cudaMemsetAsync(guard_of(t), kGuardByte, size_t(kGuardBytes), nullptr));
  }
  return s;
}

// A range of device memory and the digest it should have.
struct Expected {
  std::string name;
  const void* data = nullptr;
  int64_t bytes = 0;
  uint64_t digest = 0;
};

// The digest of each range, one read-back for all; the device is idle before and after.
std::vector<uint64_t> digests_of(const std::vector<Expected>& ranges) {
  std::vector<uint64_t> out(ranges.size());
  if (ranges.empty()) return out;
  ATTNPROF_CUDA(cudaDeviceSynchronize());
  DeviceBuffer sums(int64_t(ranges.size() * sizeof(unsigned long long)), nullptr);
  auto* sum = sums.as<unsigned long long>();
  ATTNPROF_CUDA(cudaMemsetAsync(sum, 0, size_t(sums.bytes()), nullptr));
  for (size_t i = 0; i < ranges.size(); ++i)
    add_digest(ranges[i].data, ranges[i].bytes, 0, sum + i, nullptr);
  ATTNPROF_CUDA(cudaMemcpy(out.data(), sum, size_t(sums.bytes()), cudaMemcpyDeviceToHost));
  return out;
}

// The names of the ranges whose digest is not the expected one.
std::vector<std::string> changed(const std::vector<Expected>& ranges) {
  const std::vector<uint64_t> now = digests_of(ranges);
  std::vector<std::string> out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (now[i] != ranges[i].digest) out.push_back(ranges[i].name);
  }
  return out;
}

uint64_t guard_digest() {
  static const uint64_t d = [] {
    const std::vector<unsigned char> g(size_t(kGuardBytes), kGuardByte);
    return digest_host(g.data(), kGuardBytes);
  }();
  return d;
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
    fill_inputs(fill);
    poison_outputs();
  }

  const Io& io() const override { return first_.io; }

  TensorAudit audit() override {
    TensorAudit a;
    std::swap(a.modified, freed_modified_);
    std::swap(a.overrun, freed_overrun_);
    audit_set(first_.io, "", a);
    for (size_t c = 0; c < copies_.size(); ++c)
      audit_set(copies_[c].io, fmt::format(" (timing copy {})", c + 1), a);
    return a;
  }

  void seal_inputs() override {
    std::vector<Expected> added;
    for (const InputRange& r : input_ranges(spec_, first_.io)) {
      if (!pristine_.contains(std::string(r.name)))
        added.push_back({std::string(r.name), r.data, r.bytes, 0});
    }
    const std::vector<uint64_t> d = digests_of(added);
    for (size_t i = 0; i < added.size(); ++i) pristine_[added[i].name] = d[i];
  }

  std::vector<std::string> unwritten() override {
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    std::vector<std::string> out;
    for (TensorRole r : launch_outputs(spec_, first_.io)) {
      const TensorView& t = first_.io[r];
      const int64_t n =
          count_poisoned(t.data, t.elems(), static_cast<int>(dtype_bytes(t.storage)), nullptr);
      if (n > padding_elems(spec_, r, t))
        out.push_back(fmt::format("{}: {} of {} elements", to_string(r), n, t.elems()));
    }
    return out;
  }

  void refill_inputs(const InputFill& fill) override {
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    fill_inputs(fill);
  }

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
    for (size_t c = 0; c < copies_.size(); ++c) {  // audited before they go
      TensorAudit a;
      audit_set(copies_[c].io, fmt::format(" (timing copy {})", c + 1), a);
      freed_modified_.insert(freed_modified_.end(), a.modified.begin(), a.modified.end());
      freed_overrun_.insert(freed_overrun_.end(), a.overrun.begin(), a.overrun.end());
    }
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
  // The generated inputs from `fill` on the legacy default stream, synchronized (so any launch
  // stream sees them), and their digests as what the harness wrote.
  void fill_inputs(const InputFill& fill) {
    for (TensorRole r : {TensorRole::q, TensorRole::k, TensorRole::v, TensorRole::d_o}) {
      if (!first_.io[r].present()) continue;
      const bool kv = r == TensorRole::k || r == TensorRole::v;
      fill_input(first_.io[r].data, spec_, static_cast<TensorId>(r), fill.seed, fill.pattern,
                 nullptr, first_.io[r].block_table, kv ? first_.io.seq_kv : nullptr);
    }
    if (first_.io.sink.present()) {  // the sink logits: a few fp32 values, from the host
      std::vector<float> sinks(static_cast<size_t>(spec_.q_heads));
      for (int64_t h = 0; h < spec_.q_heads; ++h)
        sinks[size_t(h)] = sink_logit(fill.pattern, fill.seed, h);
      ATTNPROF_CUDA(cudaMemcpy(first_.io.sink.data, sinks.data(), sinks.size() * sizeof(float),
                               cudaMemcpyHostToDevice));
    }
    std::vector<Expected> generated;
    for (const InputRange& r : input_ranges(spec_, first_.io)) {
      const bool forward_state =
          r.name == to_string(TensorRole::o) || r.name == to_string(TensorRole::lse);
      if (!forward_state) generated.push_back({std::string(r.name), r.data, r.bytes, 0});
    }
    const std::vector<uint64_t> d = digests_of(generated);
    for (size_t i = 0; i < generated.size(); ++i) pristine_[generated[i].name] = d[i];
  }

  // The inputs of `set` against what the harness wrote, and every tensor's guard.
  void audit_set(const Io& set, const std::string& where, TensorAudit& a) const {
    std::vector<Expected> inputs;
    for (const InputRange& r : input_ranges(spec_, set)) {
      const auto it = pristine_.find(std::string(r.name));
      if (it != pristine_.end())
        inputs.push_back({std::string(r.name) + where, r.data, r.bytes, it->second});
    }
    for (std::string& name : changed(inputs)) a.modified.push_back(std::move(name));
    std::vector<Expected> guards;
    for (TensorRole r : kTensorRoles) {
      if (set[r].present())
        guards.push_back(
            {std::string(to_string(r)) + where, guard_of(set[r]), kGuardBytes, guard_digest()});
    }
    for (std::string& name : changed(guards)) a.overrun.push_back(std::move(name));
  }

  Spec spec_;
  DeviceBuffer table_;  // a paged spec's block table, shared by every copy
  DeviceBuffer lens_;   // a ragged spec's lengths (Io::seq_q, seq_kv), shared by every copy
  Set first_;
  std::vector<Set> copies_;
  std::map<std::string, uint64_t> pristine_;  // digest of each input range as the harness wrote it
  std::vector<std::string> freed_modified_, freed_overrun_;  // found in copies since freed
};

}  // namespace

std::unique_ptr<PointTensors> make_device_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                  MemoryTracker* tracker) {
  return std::make_unique<DeviceTensors>(spec, lse, fill, tracker);
}

}  // namespace attnprof::cuda
