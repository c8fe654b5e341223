#include "measure/cuda/device_tensors.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
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
#include "measure/input_ledger.hpp"

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

// A range of device memory an audit digests, and what it should be.
struct Expected {
  std::string name;
  const void* data = nullptr;
  int64_t bytes = 0;
  uint64_t digest = 0;
  bool guard = false;  // the guard bytes after a tensor (else an input)
};

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
    TensorAudit a = ledger_.take();
    std::vector<Expected> ranges;
    add_audited(first_.io, set_label(0), ranges);
    for (size_t c = 0; c < copies_.size(); ++c)
      add_audited(copies_[c].io, set_label(c + 1), ranges);
    settle(ranges, a);
    return a;
  }

  void seal_inputs() override { expect_inputs(false); }

  std::vector<std::string> unwritten() override {
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    std::vector<std::string> out;
    for (TensorRole r : launch_outputs(spec_, first_.io)) {
      const TensorView& t = first_.io[r];
      const int64_t n = count_poisoned(t.data, t.elems(), static_cast<int>(dtype_bytes(t.storage)),
                                       scratch(1), nullptr);
      if (n > padding_elems(spec_, r, t))
        out.push_back(fmt::format("{}: {} of {} elements", to_string(r), n, t.elems()));
    }
    return out;
  }

  void refill_inputs(const InputFill& fill) override {
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    fill_inputs(fill);
  }

  void finish() override { ATTNPROF_CUDA(cudaDeviceSynchronize()); }

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
    if (!copies_.empty()) {  // audited before they go
      std::vector<Expected> ranges;
      for (size_t c = 0; c < copies_.size(); ++c)
        add_audited(copies_[c].io, set_label(c + 1), ranges);
      TensorAudit a;
      settle(ranges, a);
      ledger_.keep(a);
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
    expect_inputs(true);
  }

  // The digests of the input ranges the harness's fill wrote (`generated`), or of those it did
  // not (the forward state, when sealed), as what they must stay.
  void expect_inputs(bool generated) {
    std::vector<Expected> ranges;
    for (const InputRange& r : input_ranges(spec_, first_.io)) {
      if (r.generated == generated) ranges.push_back({std::string(r.name), r.data, r.bytes});
    }
    const std::vector<uint64_t> d = digests_of(ranges);
    for (size_t i = 0; i < ranges.size(); ++i) ledger_.expect(ranges[i].name, d[i]);
  }

  // The inputs of `set` the harness knows the digests of, and every tensor's guard.
  void add_audited(const Io& set, const std::string& where, std::vector<Expected>& ranges) const {
    for (const InputRange& r : input_ranges(spec_, set)) {
      if (const std::optional<uint64_t> d = ledger_.expected(r.name))
        ranges.push_back({std::string(r.name) + where, r.data, r.bytes, *d});
    }
    for (TensorRole r : kTensorRoles) {
      if (set[r].present()) {
        ranges.push_back({std::string(to_string(r)) + where, guard_of(set[r]), kGuardBytes,
                          guard_digest(), /*guard=*/true});
      }
    }
  }

  // The ranges whose digest changed, named in `a`: an overrun for a guard, else a modified input.
  void settle(const std::vector<Expected>& ranges, TensorAudit& a) {
    const std::vector<uint64_t> now = digests_of(ranges);
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (now[i] != ranges[i].digest)
        (ranges[i].guard ? a.overrun : a.modified).push_back(ranges[i].name);
    }
  }

  // The digest of each range, one read-back for all; the device is idle before and after.
  std::vector<uint64_t> digests_of(const std::vector<Expected>& ranges) {
    std::vector<uint64_t> out(ranges.size());
    if (ranges.empty()) return out;
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    unsigned long long* sum = scratch(ranges.size());
    const size_t bytes = ranges.size() * sizeof(unsigned long long);
    ATTNPROF_CUDA(cudaMemsetAsync(sum, 0, bytes, nullptr));
    for (size_t i = 0; i < ranges.size(); ++i)
      add_digest(ranges[i].data, ranges[i].bytes, 0, sum + i, nullptr);
    ATTNPROF_CUDA(cudaMemcpy(out.data(), sum, bytes, cudaMemcpyDeviceToHost));
    return out;
  }

  // `n` counters of device memory for the audits, kept (untracked) rather than allocated for
  // each: count_poisoned runs after every timed sample.
  unsigned long long* scratch(size_t n) {
    const auto bytes = static_cast<int64_t>(n * sizeof(unsigned long long));
    if (scratch_.bytes() < bytes) scratch_ = DeviceBuffer(bytes, nullptr);
    return scratch_.as<unsigned long long>();
  }

  Spec spec_;
  DeviceBuffer table_;  // a paged spec's block table, shared by every copy
  DeviceBuffer lens_;   // a ragged spec's lengths (Io::seq_q, seq_kv), shared by every copy
  Set first_;
  std::vector<Set> copies_;
  InputLedger ledger_;
  DeviceBuffer scratch_;  // scratch()
};

}  // namespace

std::unique_ptr<PointTensors> make_device_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                  MemoryTracker* tracker) {
  return std::make_unique<DeviceTensors>(spec, lse, fill, tracker);
}

}  // namespace attnprof::cuda
