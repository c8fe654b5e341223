// The problem: one attention shape, its dtype, mask and mode. Pure data plus validation;
// nothing here knows about providers, devices or measurement.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnprof {

// fp8_e4m3 and fp8_e5m2: one byte per element with a per-tensor scale (inputs.hpp
// fp8_tensor_scale); in backward modes dO, dQ, dK and dV are fp8 at the same scale.
enum class DType { fp32, fp16, bf16, fp8_e4m3, fp8_e5m2 };
enum class MaskKind { none, causal_tl, causal_br, window };
enum class Mode { fwd, bwd, fwd_bwd };
// bhsd: (batch, heads, seq, dim) contiguous, PyTorch's SDPA layout.
// bshd: (batch, seq, heads, dim) contiguous, FlashAttention's native layout.
enum class Layout { bhsd, bshd };

struct Mask {
  MaskKind kind = MaskKind::none;
  int64_t window = 0;  // keys visible per query for MaskKind::window (>= 1), else 0

  // Offset of the causal diagonal: key j is visible to query i iff j <= i + off.
  // 0 for top-left alignment, kv_len - q_len for bottom-right (and windows).
  int64_t diagonal_offset(int64_t q_len, int64_t kv_len) const;
  // True iff key j is visible to query i (the definition every provider is checked against).
  bool visible(int64_t i, int64_t j, int64_t q_len, int64_t kv_len) const;
  // Visible keys of query i form one interval [first, last]; empty when first > last.
  int64_t first_visible(int64_t i, int64_t q_len, int64_t kv_len) const;
  int64_t last_visible(int64_t i, int64_t q_len, int64_t kv_len) const;
  // The plainest mask with the same visible keys at this shape: none when it hides nothing
  // (a bottom-right causal decode step, a window wider than the keys), causal-br for a window
  // that never cuts, causal-tl for causal-br when q_len == kv_len; else this mask. Libraries
  // pick kernels by the mask they are given, so providers hand them this one.
  Mask simplest(int64_t q_len, int64_t kv_len) const;

  bool operator==(const Mask&) const = default;
};

struct Spec {
  int64_t batch = 1;
  int64_t q_heads = 1;
  int64_t kv_heads = 1;
  int64_t q_len = 1;
  int64_t kv_len = 1;
  int64_t head_dim = 64;
  int64_t v_head_dim = 0;  // 0 means "same as head_dim"
  DType dtype = DType::fp16;
  Mask mask{};
  Mode mode = Mode::fwd;
  Layout layout = Layout::bhsd;
  double scale = 0.0;  // softmax scale; 0 means 1/sqrt(head_dim)
  // A paged KV cache, as serving engines hold it: K and V live in pages of page_size key
  // positions (a power of two), each sequence finding its pages through a block table that the
  // harness scatters by the seed (io.hpp TensorView). 0: K and V are contiguous.
  int64_t page_size = 0;
  // Logit soft-capping (Gemma 2): each scaled score s becomes softcap * tanh(s / softcap) before
  // the mask and the softmax. 0: none.
  double softcap = 0;
  // Attention sinks (GPT-OSS): one learned logit per query head joins the softmax denominator of
  // every row of that head, without a value row, so row i gives key j the weight
  // exp(s_ij) / (exp(sink_h) + sum_j' exp(s_ij')) and the rest to nothing. The logits are an input
  // the harness generates (io.hpp TensorRole::sink); the LSE includes the sink's term.
  bool sinks = false;
  // A ragged batch (ragged.hpp): each sequence's key count drawn from this text ("uniform:A:B",
  // "zipf:A:B[:S]", "L1/L2/..."), at most kv_len; its queries are its last min(q_len, keys)
  // tokens. The tensors keep the padded shape. Empty: every sequence is q_len x kv_len.
  std::string seqlens{};
  // Absorbed multi-head latent attention (DeepSeek-V3's decode): K's first Dv columns are V, one
  // shared latent cache (the rest of K is the rope part). The harness still binds V, holding
  // those values, so every provider runs; a kernel may read the latent once, from K, and the byte
  // model counts K alone. Needs Dv <= D.
  bool shared_latent = false;

  int64_t dv() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
  // K's first columns that hold V's values: Dv with a shared latent, else 0 (inputs.hpp
  // input_value_of).
  int64_t latent_columns() const { return shared_latent ? dv() : 0; }
  double softmax_scale() const;
  int64_t group_size() const { return kv_heads > 0 ? q_heads / kv_heads : 0; }
  bool paged() const { return page_size > 0; }
  bool ragged() const { return !seqlens.empty(); }
  // Pages per sequence (ceil(kv_len / page_size)); 0 when not paged.
  int64_t pages_per_seq() const;
  // Key positions each sequence's K and V hold: kv_len, or its whole pages when paged (the last
  // page's tail is held, never read).
  int64_t kv_rows() const;
  // Entries of the block table: batch * pages_per_seq (int32 page ids); 0 when not paged.
  int64_t block_table_elems() const;

  // Element counts of each tensor (saturating at INT64_MAX; validate() rejects overflow). K's and
  // V's count the positions they hold (kv_rows).
  int64_t q_elems() const;
  int64_t k_elems() const;
  int64_t v_elems() const;
  int64_t o_elems() const;
  int64_t largest_tensor_elems() const;

  // Every problem, each naming the field and what is allowed; empty when the spec is valid.
  std::vector<std::string> validate() const;

  // Both follow the axis table (axes.hpp Axis::key_part and label_part).
  // Stable one-line key, e.g. "b1.hq12.hkv12.q2048.k2048.d64.dv64.fp16.none.fwd.bhsd" (".p16"
  // follows for a paged cache, ".cap50" for a softcap, ".sinks" for sinks, ".sl-uniform-512-8192"
  // for a ragged batch, ".latent" for a shared latent)
  std::string key() const;
  // Short human label, e.g. "B1 H12/12 N2048 D64 fp16 causal fwd" (" bshd" for that layout,
  // " scale0.1" for a scale of its own, " paged16" for a paged cache, " softcap50", " sinks",
  // " ragged uniform:512:8192", " latent")
  std::string label() const;
  // The label without the words of the axes named by key ("batch", "seq").
  std::string label_without(std::span<const std::string_view> axis_keys) const;

  bool operator==(const Spec&) const = default;
};

std::size_t dtype_bytes(DType t);
bool is_fp8(DType t);
// The fp8 format of an fp8 dtype (inputs.hpp: 0 e4m3, 1 e5m2); -1 for the others.
int fp8_format(DType t);
std::string_view to_string(DType t);
std::string_view to_string(MaskKind m);
std::string to_string(const Mask& m);  // "none", "causal", "causal-br", "window:W"
std::string_view to_string(Mode m);
std::string_view to_string(Layout l);

// Parsers return nullopt on unknown text; callers turn that into a one-line error.
std::optional<DType> parse_dtype(std::string_view s);
std::optional<Mask> parse_mask(std::string_view s);
std::optional<Mode> parse_mode(std::string_view s);
std::optional<Layout> parse_layout(std::string_view s);

inline constexpr std::string_view kDTypeChoices = "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2";
inline constexpr std::string_view kMaskChoices = "none, causal, causal-br, window:W (W >= 1)";
inline constexpr std::string_view kModeChoices = "fwd, bwd, fwd_bwd";
inline constexpr std::string_view kLayoutChoices = "bhsd, bshd";

}  // namespace attnprof
