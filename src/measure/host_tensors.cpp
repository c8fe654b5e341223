#include "measure/host_tensors.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "attnprof/paging.hpp"
#include "attnprof/ragged.hpp"

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
      : spec_(spec), tracker_(tracker) {
    io_ = io_layout(spec, DType::fp32, lse);
    try {
      for (TensorRole r : kTensorRoles) {
        TensorView& t = io_[r];
        if (t.elems() == 0) continue;
        storage_.emplace_back(static_cast<size_t>(t.elems()));
        t.data = storage_.back().data();
        bytes_ += t.bytes();
      }
    } catch (const std::bad_alloc&) {
      throw OutOfMemory("host allocation of " +
                        std::to_string(tensor_bytes(io_layout(spec, DType::fp32, lse))) +
                        " bytes of point tensors failed");
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
    for (TensorRole r : {TensorRole::q, TensorRole::k, TensorRole::v, TensorRole::d_o}) {
      const bool kv = r == TensorRole::k || r == TensorRole::v;
      if (io_[r].present())
        fill_input(io_[r], r, fill, static_cast<int>(spec.dtype), threads,
                   kv ? io_.seq_kv : nullptr, spec.latent_columns());
    }
    if (io_.sink.present()) {  // the sink logits: fp32 whatever the dtype
      for (int64_t h = 0; h < spec.q_heads; ++h)
        io_.sink.as<float>()[h] = sink_logit(fill.pattern, fill.seed, h);
    }
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

  HostOutputs read_outputs() override {
    HostOutputs out;
    for (TensorRole r : launch_outputs(spec_, io_)) *out.slot(r) = copy_of(io_[r]);
    return out;
  }

  int64_t bytes() const override { return bytes_; }

  // The CPU engine never rotates (host caches are not what a CPU point measures cold); copies
  // are made on request all the same, untracked, for tests.
  std::vector<Io> replicate(int copies) override {
    copies_.clear();
    std::vector<Io> sets = {io_};
    for (int c = 1; c < copies; ++c) {
      Io set = io_;
      auto& store = copies_.emplace_back();
      for (TensorRole r : kTensorRoles) {
        if (!io_[r].present()) continue;
        store.push_back(copy_of(io_[r]));
        set[r].data = store.back().data();
      }
      sets.push_back(set);
    }
    return sets;
  }

 private:
  static void poison(const TensorView& t) {
    std::fill_n(t.as<float>(), t.elems(), std::numeric_limits<float>::quiet_NaN());
  }

  Spec spec_;
  MemoryTracker* tracker_;
  std::vector<int32_t> table_;  // a paged spec's block table, shared by every copy
  std::vector<int32_t> lens_;   // a ragged spec's query rows, then keys, per sequence (Io)
  Io io_;
  std::vector<std::vector<float>> storage_;
  int64_t bytes_ = 0;
  std::vector<std::vector<std::vector<float>>> copies_;
};

}  // namespace

std::unique_ptr<PointTensors> make_host_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                int threads, MemoryTracker* tracker) {
  return std::make_unique<HostTensors>(spec, lse, fill, threads, tracker);
}

}  // namespace attnprof
