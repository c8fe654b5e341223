#include "measure/host_tensors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/audit.hpp"
#include "attnprof/digest.hpp"
#include "attnprof/paging.hpp"
#include "attnprof/ragged.hpp"
#include "measure/input_ledger.hpp"

namespace attnprof {

namespace {

// Every element of input `role` of `t`, as float, in the tensor's layout order (the flat index
// the generator is keyed on).
// A paged K or V (io.hpp) holds the values of the contiguous tensor, each in its page.
// A ragged K or V holds kPageTailValue past each sequence's keys (`kv_lens`; null: uniform).
// K holds V's values in its first `latent_dv` columns (Spec::latent_columns; inputs.hpp).
void fill_input(const TensorView& t, TensorRole role, const InputFill& fill, int dtype_code,
                int threads, const int32_t* kv_lens, int64_t latent_dv) {
  const int64_t n = t.batch * t.heads * t.len * t.dim;  // elements of the contiguous tensor
  // Position of flat element e: bhsd rows are (b, h, pos), bshd rows are (b, pos, h).
  const bool bhsd = t.layout == Layout::bhsd;
  const int64_t pos_div = bhsd ? t.dim : t.dim * t.heads;
  float* out = t.as<float>();
  const auto id = static_cast<TensorId>(role);  // q, k, v, d_o share the generator's ids
  const PageMap pages = t.page_map();
  const int workers = static_cast<int>(std::clamp<int64_t>(n / 4096 + 1, 1, std::max(1, threads)));
#pragma omp parallel for num_threads(workers) schedule(static)
  for (int64_t e = 0; e < n; ++e) {
    const int64_t dim = e % t.dim;
    const int64_t pos = (e / pos_div) % t.len;
    int64_t at = e;
    if (t.paged()) {
      const int64_t h = bhsd ? (e / (t.dim * t.len)) % t.heads : (e / t.dim) % t.heads;
      at = pages.row(e / (t.heads * t.len * t.dim), h, pos) * t.dim + dim;
    }
    const bool padding = kv_lens != nullptr && pos >= kv_lens[e / (t.heads * t.len * t.dim)];
    out[at] = padding ? kPageTailValue
                      : input_value_of(fill.pattern, fill.seed, id, static_cast<uint64_t>(e),
                                       dtype_code, pos, dim, t.dim, latent_dv);
  }
}

std::vector<float> copy_of(const TensorView& t) {
  const float* p = t.as<const float>();
  return std::vector<float>(p, p + t.elems());
}

class HostTensors final : public PointTensors {
 public:
  HostTensors(const Spec& spec, bool lse, const InputFill& fill, int threads,
              MemoryTracker* tracker)
      : spec_(spec), tracker_(tracker), threads_(threads) {
    io_ = io_layout(spec, DType::fp32, lse);
    try {
      for (TensorRole r : kTensorRoles) {
        TensorView& t = io_[r];
        if (t.elems() == 0) continue;
        storage_.push_back(guarded(t.elems()));
        t.data = storage_.back().data();
        bytes_ += t.bytes();
      }
    } catch (const std::bad_alloc&) {
      const auto bytes = static_cast<double>(tensor_bytes(io_layout(spec, DType::fp32, lse)));
      throw OutOfMemory(fmt::format("host allocation of {:.3g} GiB of point tensors failed",
                                    bytes / double(int64_t{1} << 30)));
    }
    table_ = block_table(spec, fill.seed);
    if (!table_.empty()) {
      bytes_ += static_cast<int64_t>(table_.size() * sizeof(int32_t));
      for (TensorRole r : {TensorRole::k, TensorRole::v}) {
        io_[r].block_table = table_.data();
        // The last page's tail (paging.hpp kPageTailValue); fill_input writes every key.
        std::fill_n(io_[r].as<float>(), io_[r].elems(), kPageTailValue);
      }
    }
    if (spec.ragged()) {
      const SeqLens l = seq_lens(spec);
      lens_.assign(l.q.begin(), l.q.end());
      lens_.insert(lens_.end(), l.kv.begin(), l.kv.end());
      bytes_ += static_cast<int64_t>(lens_.size() * sizeof(int32_t));
      io_.seq_q = lens_.data();
      io_.seq_kv = lens_.data() + spec.batch;
    }
    if (tracker_ != nullptr) tracker_->on_alloc(bytes_);
    fill_inputs(fill);
    poison_outputs();
  }
  ~HostTensors() override {
    if (tracker_ != nullptr) tracker_->on_free(bytes_);
  }
  HostTensors(const HostTensors&) = delete;
  HostTensors& operator=(const HostTensors&) = delete;

  const Io& io() const override { return io_; }

  void poison_outputs() override {
    for (TensorRole r : launch_outputs(spec_, io_)) poison(io_[r]);
  }

  TensorAudit audit() override {
    TensorAudit a = ledger_.take();
    audit_set(io_, set_label(0), a);
    for (size_t c = 0; c < copy_sets_.size(); ++c) audit_set(copy_sets_[c], set_label(c + 1), a);
    return a;
  }

  void seal_inputs() override {
    for (const InputRange& r : input_ranges(spec_, io_)) {
      if (!r.generated) ledger_.expect(r.name, digest_host(r.data, r.bytes));
    }
  }

  std::vector<std::string> unwritten() override {
    std::vector<std::string> out;
    for (TensorRole r : launch_outputs(spec_, io_)) {
      const TensorView& t = io_[r];
      const auto* bits = t.as<const uint32_t>();
      const auto n = static_cast<int64_t>(std::count(bits, bits + t.elems(), kPoisonBits));
      if (n > padding_elems(spec_, r, t))
        out.push_back(fmt::format("{}: {} of {} elements", to_string(r), n, t.elems()));
    }
    return out;
  }

  void refill_inputs(const InputFill& fill) override { fill_inputs(fill); }

  HostOutputs read_outputs() override {
    HostOutputs out;
    for (TensorRole r : launch_outputs(spec_, io_)) *out.slot(r) = copy_of(io_[r]);
    return out;
  }

  int64_t bytes() const override { return bytes_; }

  // The CPU engine never rotates (host caches are not what a CPU point measures cold); copies
  // are made on request all the same, untracked, for tests.
  std::vector<Io> replicate(int copies) override {
    for (size_t c = 0; c < copy_sets_.size(); ++c) {  // audited before they go
      TensorAudit a;
      audit_set(copy_sets_[c], set_label(c + 1), a);
      ledger_.keep(a);
    }
    copies_.clear();
    copy_sets_.clear();
    std::vector<Io> sets = {io_};
    for (int c = 1; c < copies; ++c) {
      Io set = io_;
      auto& store = copies_.emplace_back();
      for (TensorRole r : kTensorRoles) {
        if (!io_[r].present()) continue;
        std::vector<float> t = guarded(io_[r].elems());
        std::copy_n(io_[r].as<const float>(), io_[r].elems(), t.begin());
        store.push_back(std::move(t));
        set[r].data = store.back().data();
      }
      copy_sets_.push_back(set);
      sets.push_back(set);
    }
    return sets;
  }

 private:
  // Every bit set: NaN, and a pattern no arithmetic result holds (NaNs it makes are quiet NaNs
  // of another payload), so unwritten() can tell an unwritten element from a computed NaN.
  static constexpr uint32_t kPoisonBits = 0xFFFFFFFFu;
  static constexpr int64_t kGuardFloats = kGuardBytes / int64_t(sizeof(float));

  static void poison(const TensorView& t) { std::fill_n(t.as<uint32_t>(), t.elems(), kPoisonBits); }

  // Storage for `elems` floats and the guard after them.
  static std::vector<float> guarded(int64_t elems) {
    std::vector<float> v(static_cast<size_t>(elems + kGuardFloats));
    std::memset(v.data() + elems, kGuardByte, static_cast<size_t>(kGuardBytes));
    return v;
  }

  static bool guard_intact(const TensorView& t) {
    const auto* g = reinterpret_cast<const unsigned char*>(t.as<const float>() + t.elems());
    return std::all_of(g, g + kGuardBytes, [](unsigned char b) { return b == kGuardByte; });
  }

  // The inputs of `set` against what the harness wrote, and every tensor's guard.
  void audit_set(const Io& set, const std::string& where, TensorAudit& a) const {
    for (const InputRange& r : input_ranges(spec_, set)) {
      const std::optional<uint64_t> d = ledger_.expected(r.name);
      if (d && digest_host(r.data, r.bytes) != *d)
        a.modified.push_back(std::string(r.name) + where);
    }
    for (TensorRole r : kTensorRoles) {
      if (set[r].present() && !guard_intact(set[r]))
        a.overrun.push_back(std::string(to_string(r)) + where);
    }
  }

  // The generated inputs from `fill`, and their digests as what the harness wrote.
  void fill_inputs(const InputFill& fill) {
    for (TensorRole r : {TensorRole::q, TensorRole::k, TensorRole::v, TensorRole::d_o}) {
      const bool kv = r == TensorRole::k || r == TensorRole::v;
      if (io_[r].present())
        fill_input(io_[r], r, fill, static_cast<int>(spec_.dtype), threads_,
                   kv ? io_.seq_kv : nullptr, spec_.latent_columns());
    }
    if (io_.sink.present()) {  // the sink logits: fp32 whatever the dtype
      for (int64_t h = 0; h < spec_.q_heads; ++h)
        io_.sink.as<float>()[h] = sink_logit(fill.pattern, fill.seed, h);
    }
    for (const InputRange& r : input_ranges(spec_, io_)) {
      if (r.generated) ledger_.expect(r.name, digest_host(r.data, r.bytes));
    }
  }

  Spec spec_;
  MemoryTracker* tracker_;
  int threads_;
  std::vector<int32_t> table_;  // a paged spec's block table, shared by every copy
  std::vector<int32_t> lens_;   // a ragged spec's query rows, then keys, per sequence (Io)
  Io io_;
  std::vector<std::vector<float>> storage_;
  int64_t bytes_ = 0;
  std::vector<std::vector<std::vector<float>>> copies_;
  std::vector<Io> copy_sets_;  // the sets of copies_
  InputLedger ledger_;
};

}  // namespace

std::unique_ptr<PointTensors> make_host_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                int threads, MemoryTracker* tracker) {
  return std::make_unique<HostTensors>(spec, lse, fill, threads, tracker);
}

}  // namespace attnprof
