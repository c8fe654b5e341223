// The tensors of one point, owned by the harness (docs/design.md, "Inputs owned by the harness").
// The engine allocates them on its device, fills the inputs once from the counter-based generator
// (inputs.hpp), poisons the outputs, reads them back for the verifier and, for cold timing of
// short launches, holds copies of them; a provider only reads and writes the memory it is given.
// So every provider of a point sees bit-identical inputs, cold timing works the same for all of
// them, and a provider wrapping a framework wraps this memory (torch::from_blob, DLPack, ORT
// IOBinding) instead of allocating its own.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnprof/inputs.hpp"  // ATTNPROF_HD
#include "attnprof/spec.hpp"

namespace attnprof {

// Every tensor a point can have. q, k, v and d_o are generated (their generator ids are
// TensorId's); o and lse are the forward's outputs (inputs of mode bwd); dq, dk, dv the gradients;
// sink the sink logits (Spec::sinks: q_heads fp32 values, generated as TensorId::sink).
enum class TensorRole { q, k, v, d_o, o, lse, dq, dk, dv, sink };
inline constexpr std::array<TensorRole, 10> kTensorRoles = {
    TensorRole::q,   TensorRole::k,  TensorRole::v,  TensorRole::d_o, TensorRole::o,
    TensorRole::lse, TensorRole::dq, TensorRole::dk, TensorRole::dv,  TensorRole::sink};
std::string_view to_string(TensorRole r);

// Where the rows of a paged K or V lie (TensorView below): row (b, h, pos), `dim` consecutive
// elements, is row `row(b, h, pos)` of the container of pages. One definition for the host
// (TensorView::offset, the host fill) and the device (the fill, the gather, the device check),
// so the table is read in memory of the side that calls it. Page sizes are powers of two
// (Spec::validate), so a position splits into its page and its row by a shift and a mask, never a
// 64-bit division (which a kernel pays dearly for per row). A kernel may read a page id ahead of
// the rows it needs (page, then row_on_page).
struct PageMap {
  const int32_t* table = nullptr;  // (batch, pages_per_seq) page ids
  int64_t page_size = 0, pages_per_seq = 0, heads = 0;
  bool bshd = false;  // pages of (page_size, heads) rows; else (heads, page_size)
  int shift = 0;      // log2(page_size)
  // The page holding key `pos` of sequence b.
  ATTNPROF_HD int32_t page(int64_t b, int64_t pos) const {
    return table[b * pages_per_seq + (pos >> shift)];
  }
  // The row of (h, pos) on page `page`.
  ATTNPROF_HD int64_t row_on_page(int64_t page, int64_t h, int64_t pos) const {
    const int64_t r = pos & (page_size - 1);
    return page * page_size * heads + (bshd ? r * heads + h : h * page_size + r);
  }
  ATTNPROF_HD int64_t row(int64_t b, int64_t h, int64_t pos) const {
    return row_on_page(page(b, pos), h, pos);
  }
  // The map of a table of `pages_per_seq` pages of `page_size` rows: its shift from the size.
  // Every map is made here, so none has a shift that disagrees with its page size.
  static PageMap of(const int32_t* table, int64_t page_size, int64_t pages_per_seq, int64_t heads,
                    bool bshd) {
    return {table,         page_size,
            pages_per_seq, heads,
            bshd,          page_size > 0 ? std::countr_zero(static_cast<uint64_t>(page_size)) : 0};
  }
};

// One tensor: logical (batch, heads, len, dim), stored in `layout` (bhsd or bshd, the spec's), in
// elements of `storage`. The LSE is (batch, heads, len) fp32 with dim 1, always bhsd. Host
// tensors store fp32 (every fp16/bf16 value is exact in fp32), device tensors the spec's dtype.
struct TensorView {
  void* data = nullptr;  // null: the point has no such tensor
  DType storage = DType::fp32;
  Layout layout = Layout::bhsd;
  int64_t batch = 0, heads = 0, len = 0, dim = 0;
  // K and V of a paged spec (Spec::page_size): the tensor is held in pages of page_size
  // positions, each page (heads, page_size, dim) for bhsd and (page_size, heads, dim) for bshd,
  // and sequence b's p-th page is page block_table[b * pages_per_seq() + p]. The table lies in
  // the memory `data` does (host or device), and is shared by every copy of the point's inputs.
  // page_size 0: contiguous.
  int64_t page_size = 0;
  const int32_t* block_table = nullptr;

  bool present() const { return data != nullptr; }
  bool paged() const { return page_size > 0; }
  int64_t pages_per_seq() const { return paged() ? (len + page_size - 1) / page_size : 0; }
  // Positions held per sequence: len, or whole pages when paged.
  int64_t rows() const { return paged() ? pages_per_seq() * page_size : len; }
  // Elements held (pages included whole).
  int64_t elems() const { return batch * heads * rows() * dim; }
  int64_t bytes() const { return elems() * static_cast<int64_t>(dtype_bytes(storage)); }
  // Element strides of the four logical axes of a contiguous tensor (within one page of a paged
  // one: stride_h and stride_s with len = page_size).
  int64_t stride_b() const { return heads * len * dim; }
  int64_t stride_h() const {
    return layout == Layout::bhsd ? (paged() ? page_size : len) * dim : dim;
  }
  int64_t stride_s() const { return layout == Layout::bhsd ? dim : heads * dim; }
  // A paged view's rows (PageMap); its table is in the memory of `data`.
  PageMap page_map() const {
    return PageMap::of(block_table, page_size, pages_per_seq(), heads, layout == Layout::bshd);
  }
  // Element offset of (b, h, pos, d). A paged view reads its block table: host memory only.
  int64_t offset(int64_t b, int64_t h, int64_t pos, int64_t d = 0) const {
    if (!paged()) return b * stride_b() + h * stride_h() + pos * stride_s() + d;
    return page_map().row(b, h, pos) * dim + d;
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// One set of a point's tensors.
struct Io {
  TensorView q, k, v, d_o;  // inputs; d_o only in backward modes
  TensorView o, lse;        // the forward's outputs (in mode bwd: what prepare() computed)
  TensorView dq, dk, dv;    // gradients, backward modes only
  TensorView sink;          // the sink logits (Spec::sinks): batch 1, q_heads, len 1, dim 1, fp32
  // A ragged batch's lengths (Spec::seqlens, ragged.hpp seq_lens): per sequence its query rows
  // and its keys, (batch) int32 each, in the memory the tensors are in; null when uniform. Like a
  // block table they are shared by every copy of the point's inputs. K and V hold paging.hpp's
  // kPageTailValue past each sequence's keys, so a kernel that gives a padding key weight fails.
  const int32_t* seq_q = nullptr;
  const int32_t* seq_kv = nullptr;

  TensorView& operator[](TensorRole r);
  const TensorView& operator[](TensorRole r) const;
};

// The tensors of `spec` with their shapes and storage, data left null (and a paged spec's block
// table: the PointTensors hold it). `lse`: whether the point
// holds a log-sum-exp (the provider writes one: ProviderTraits::writes_lse). O exists in every
// mode: in mode bwd the provider's prepare() writes the forward output the backward reads.
Io io_layout(const Spec& spec, DType storage, bool lse);

// The tensors the timed launch writes (what the poison covers and the verifier reads): O and the
// LSE for fwd, the gradients for bwd, all of them for fwd_bwd; only those present in `io`.
std::vector<TensorRole> launch_outputs(const Spec& spec, const Io& io);
// What the launch reads: the generated inputs (the sink logits included), plus O and the LSE in
// mode bwd.
std::vector<TensorRole> launch_inputs(const Spec& spec, const Io& io);

// Bytes of every tensor of `io` by its shape: an allocated one's, or a layout's before it has
// memory (the estimate of a point).
int64_t tensor_bytes(const Io& io);

// Host copies of a launch's outputs as float, in the spec's layout, for the verifier. Tensors the
// launch does not write are left empty. A partial read (PointTensors::read_rows) holds only some
// rows (a row: `dim` consecutive elements, contiguous in both layouts; one element of the LSE).
struct HostOutputs {
  std::vector<float> o;
  std::vector<float> lse;  // (B, Hq, Nq) natural-log log-sum-exp of the scaled scores, if written
  std::vector<float> dq, dk, dv;
  // Partial reads: per output role, the flat index of each held row's first element mapped to
  // where the row starts in the role's vector. Empty when every vector holds its whole tensor.
  std::map<TensorRole, std::unordered_map<int64_t, size_t>> held;

  // The field of an output role (o, lse, dq, dk, dv); null for an input role.
  std::vector<float>* slot(TensorRole r);
  const std::vector<float>* slot(TensorRole r) const;
  bool partial() const { return !held.empty(); }
  // The row of output `r` whose first element has flat index `first`; null when not held.
  const float* row(TensorRole r, int64_t first) const;
};

}  // namespace attnprof
