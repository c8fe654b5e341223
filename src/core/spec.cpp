#include "attnprof/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "attnprof/axes.hpp"
#include "attnprof/ragged.hpp"

namespace attnprof {

namespace {

// a * b, saturating at INT64_MAX for non-negative operands (overflow is reported by validate()).
int64_t mul_sat(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return a * b;
  if (a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}

int64_t elems(int64_t b, int64_t h, int64_t n, int64_t d) {
  return mul_sat(mul_sat(mul_sat(b, h), n), d);
}

// The axes that write a part of the key (Axis::key_part) or of the label (label_part), in the
// order they say: sorted once, the table being fixed.
const std::vector<const Axis*>& axes_in_order(bool key) {
  static const auto ordered = [](bool k) {
    std::vector<const Axis*> out;
    for (const Axis& a : axes())
      if (k ? a.key_part != nullptr : a.label_part != nullptr) out.push_back(&a);
    std::stable_sort(out.begin(), out.end(), [k](const Axis* a, const Axis* b) {
      return k ? a->key_at < b->key_at : a->label_at < b->label_at;
    });
    return out;
  };
  static const std::vector<const Axis*> by_key = ordered(true), by_label = ordered(false);
  return key ? by_key : by_label;
}

// The parts the axes give, in their order, joined ('.' for the key, ' ' for the label).
std::string joined_parts(const Spec& spec, bool key, std::span<const std::string_view> omit) {
  std::string out;
  for (const Axis* a : axes_in_order(key)) {
    if (std::find(omit.begin(), omit.end(), a->key) != omit.end()) continue;
    const std::string text = (key ? a->key_part : a->label_part)(spec);
    if (!text.empty()) out += (out.empty() ? "" : key ? "." : " ") + text;
  }
  return out;
}

}  // namespace

int64_t Mask::diagonal_offset(int64_t q_len, int64_t kv_len) const {
  return kind == MaskKind::causal_tl ? 0 : kv_len - q_len;
}

bool Mask::visible(int64_t i, int64_t j, int64_t q_len, int64_t kv_len) const {
  if (j < 0 || j >= kv_len) return false;
  if (kind == MaskKind::none) return true;
  const int64_t off = diagonal_offset(q_len, kv_len);
  if (j > i + off) return false;
  if (kind == MaskKind::window && j <= i + off - window) return false;
  return true;
}

int64_t Mask::first_visible(int64_t i, int64_t q_len, int64_t kv_len) const {
  if (kind != MaskKind::window) return 0;
  return std::max<int64_t>(0, i + diagonal_offset(q_len, kv_len) - window + 1);
}

int64_t Mask::last_visible(int64_t i, int64_t q_len, int64_t kv_len) const {
  if (kind == MaskKind::none) return kv_len - 1;
  return std::min<int64_t>(kv_len - 1, i + diagonal_offset(q_len, kv_len));
}

Mask Mask::simplest(int64_t q_len, int64_t kv_len) const {
  if (kind == MaskKind::none || q_len <= 0 || kv_len <= 0) return *this;
  // Both interval ends never decrease with the query: the last row has the widest reach back,
  // the first row the shortest reach forward.
  if (first_visible(q_len - 1, q_len, kv_len) == 0 && last_visible(0, q_len, kv_len) == kv_len - 1)
    return Mask{};
  Mask m = *this;
  if (m.kind == MaskKind::window && first_visible(q_len - 1, q_len, kv_len) == 0)
    m = Mask{MaskKind::causal_br, 0};
  if (m.kind == MaskKind::causal_br && q_len == kv_len) m = Mask{MaskKind::causal_tl, 0};
  return m;
}

double Spec::softmax_scale() const {
  return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

int64_t Spec::q_elems() const {
  return elems(batch, q_heads, q_len, head_dim);
}
int64_t Spec::pages_per_seq() const {
  return page_size > 0 && kv_len > 0 ? (kv_len + page_size - 1) / page_size : 0;
}
int64_t Spec::kv_rows() const {
  return page_size > 0 ? mul_sat(pages_per_seq(), page_size) : kv_len;
}
int64_t Spec::block_table_elems() const {
  return mul_sat(batch, pages_per_seq());
}
int64_t Spec::k_elems() const {
  return elems(batch, kv_heads, kv_rows(), head_dim);
}
int64_t Spec::v_elems() const {
  return elems(batch, kv_heads, kv_rows(), dv());
}
int64_t Spec::o_elems() const {
  return elems(batch, q_heads, q_len, dv());
}
int64_t Spec::largest_tensor_elems() const {
  return std::max({q_elems(), k_elems(), v_elems(), o_elems()});
}

namespace {

// The rules a spec is held to, a function per concern, each adding its one-line errors in the
// order validate() gives them.
using Errors = std::vector<std::string>;

void check_sizes(const Spec& s, Errors& errors) {
  auto positive = [&](const char* field, int64_t v) {
    if (v < 1) errors.push_back(fmt::format("{} must be >= 1 (got {})", field, v));
  };
  positive("batch", s.batch);
  positive("q_heads", s.q_heads);
  positive("kv_heads", s.kv_heads);
  positive("q_len", s.q_len);
  positive("kv_len", s.kv_len);
  positive("head_dim", s.head_dim);
  if (s.v_head_dim < 0)
    errors.push_back(
        fmt::format("v_head_dim must be >= 1 or 0 for 'same as head_dim' (got {})", s.v_head_dim));
  if (s.q_heads >= 1 && s.kv_heads >= 1 && s.q_heads % s.kv_heads != 0) {
    errors.push_back(fmt::format("kv_heads ({}) must divide q_heads ({})", s.kv_heads, s.q_heads));
  }
}

void check_choices(const Spec& s, Errors& errors) {
  if (int(s.dtype) < 0 || int(s.dtype) > int(DType::fp8_e5m2)) {
    errors.push_back(fmt::format("dtype must be one of {}", kDTypeChoices));
  }
  if (int(s.mode) < 0 || int(s.mode) > int(Mode::fwd_bwd)) {
    errors.push_back(fmt::format("mode must be one of {}", kModeChoices));
  }
}

void check_mask(const Spec& s, Errors& errors) {
  const Mask& mask = s.mask;
  if (int(mask.kind) < 0 || int(mask.kind) > int(MaskKind::window)) {
    errors.push_back(fmt::format("mask must be one of {}", kMaskChoices));
  } else if (mask.kind == MaskKind::window && mask.window < 1) {
    errors.push_back(fmt::format("mask window must be >= 1 (got {})", mask.window));
  } else if (mask.kind != MaskKind::window && mask.window != 0) {
    errors.push_back("mask window is only allowed with mask window:W");
  }
  if ((mask.kind == MaskKind::causal_br || mask.kind == MaskKind::window) && s.q_len > s.kv_len &&
      s.q_len >= 1 && s.kv_len >= 1) {
    errors.push_back(fmt::format(
        "mask {} needs q_len <= kv_len (got q_len {} > kv_len {}): the first queries would see "
        "no key",
        to_string(mask), s.q_len, s.kv_len));
  }
}

void check_numbers(const Spec& s, Errors& errors) {
  if (!(s.scale >= 0) || std::isinf(s.scale)) {
    errors.push_back(
        fmt::format("scale must be finite and >= 0, 0 meaning 1/sqrt(head_dim) (got {})", s.scale));
  }
  if (s.page_size < 0 || (s.page_size > 0 && (s.page_size & (s.page_size - 1)) != 0)) {
    errors.push_back(fmt::format(
        "page_size must be a power of two, or 0 for contiguous K and V (got {})", s.page_size));
  } else if (s.page_size > 0 && s.batch >= 1 && s.kv_len >= 1 &&
             s.block_table_elems() > std::numeric_limits<int32_t>::max()) {
    errors.push_back(fmt::format("{} pages do not fit the block table's 32-bit page ids",
                                 s.block_table_elems()));
  }
  if (!(s.softcap >= 0) || std::isinf(s.softcap)) {
    errors.push_back(
        fmt::format("softcap must be finite and >= 0, 0 meaning none (got {})", s.softcap));
  }
  if (s.shared_latent && s.head_dim >= 1 && s.dv() > s.head_dim) {
    errors.push_back(fmt::format(
        "a shared latent is V as K's first Dv columns: it needs v_head_dim <= head_dim (got {} > "
        "{})",
        s.dv(), s.head_dim));
  }
}

void check_ragged(const Spec& s, Errors& errors) {
  if (!s.ragged()) return;
  if (auto why = seqlens_problem(s.seqlens)) {
    errors.push_back("seqlens: " + *why);
  } else if (s.q_len > s.kv_len && s.q_len >= 1) {
    errors.push_back(fmt::format(
        "a ragged batch (seqlens) needs q_len <= kv_len (got {} > {}): each sequence's queries "
        "are its last tokens",
        s.q_len, s.kv_len));
  } else if (s.batch >= 1 && s.batch <= (int64_t{1} << 24) && s.kv_len >= 1) {
    const std::vector<int64_t> kv = seqlens_draw(s.seqlens, s.batch);
    const int64_t longest = *std::max_element(kv.begin(), kv.end());
    if (longest > s.kv_len)
      errors.push_back(fmt::format(
          "seqlens {} gives a sequence {} keys, past kv_len {} (the longest the tensors hold)",
          s.seqlens, longest, s.kv_len));
  }
}

// The variants only the forward takes (Axis::forward_only).
void check_forward_only(const Spec& s, Errors& errors) {
  for (const Axis& a : axes()) {
    if (!a.forward_only.empty() && s.mode != Mode::fwd && axis_is_set(a, s)) {
      errors.push_back(fmt::format("{} is forward only here (mode {} needs {} {})", a.forward_only,
                                   to_string(s.mode), a.flag, a.fallback));
    }
  }
}

// Element counts and byte sizes must fit in 64-bit signed integers (checked on an otherwise valid
// spec).
void check_overflow(const Spec& s, Errors& errors) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t width = static_cast<int64_t>(dtype_bytes(s.dtype));
  for (int64_t n : {s.q_elems(), s.k_elems(), s.v_elems(), s.o_elems()}) {
    if (n == max || n > max / width) {
      errors.push_back(fmt::format(
          "shape too large: a tensor of batch {} x heads x len x dim overflows 64-bit element "
          "counts",
          s.batch));
      break;
    }
  }
  if (mul_sat(mul_sat(s.batch, s.q_heads), mul_sat(s.q_len, s.kv_len)) == max) {
    errors.push_back("shape too large: batch x q_heads x q_len x kv_len overflows 64 bits");
  }
}

constexpr void (*kRules[])(const Spec&, Errors&) = {
    check_sizes, check_choices, check_mask, check_numbers, check_ragged, check_forward_only,
};

}  // namespace

std::vector<std::string> Spec::validate() const {
  Errors errors;
  for (const auto rule : kRules) rule(*this, errors);
  if (errors.empty()) check_overflow(*this, errors);
  return errors;
}

std::string Spec::key() const {
  return joined_parts(*this, true, {});
}

std::string Spec::label() const {
  return joined_parts(*this, false, {});
}

std::string Spec::label_without(std::span<const std::string_view> axis_keys) const {
  return joined_parts(*this, false, axis_keys);
}

std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::fp32:
      return 4;
    case DType::fp16:
      return 2;
    case DType::bf16:
      return 2;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      return 1;
  }
  return 0;
}

bool is_fp8(DType t) {
  return t == DType::fp8_e4m3 || t == DType::fp8_e5m2;
}

int fp8_format(DType t) {
  return t == DType::fp8_e4m3 ? 0 : t == DType::fp8_e5m2 ? 1 : -1;
}

std::string_view to_string(DType t) {
  switch (t) {
    case DType::fp32:
      return "fp32";
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
    case DType::fp8_e4m3:
      return "fp8_e4m3";
    case DType::fp8_e5m2:
      return "fp8_e5m2";
  }
  return "?";
}

std::string_view to_string(MaskKind m) {
  switch (m) {
    case MaskKind::none:
      return "none";
    case MaskKind::causal_tl:
      return "causal";
    case MaskKind::causal_br:
      return "causal-br";
    case MaskKind::window:
      return "window";
  }
  return "?";
}

std::string to_string(const Mask& m) {
  if (m.kind == MaskKind::window) return fmt::format("window:{}", m.window);
  return std::string(to_string(m.kind));
}

std::string_view to_string(Mode m) {
  switch (m) {
    case Mode::fwd:
      return "fwd";
    case Mode::bwd:
      return "bwd";
    case Mode::fwd_bwd:
      return "fwd_bwd";
  }
  return "?";
}

std::string_view to_string(Layout l) {
  switch (l) {
    case Layout::bhsd:
      return "bhsd";
    case Layout::bshd:
      return "bshd";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "float32") return DType::fp32;
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "fp8_e4m3" || s == "e4m3" || s == "float8_e4m3fn") return DType::fp8_e4m3;
  if (s == "fp8_e5m2" || s == "e5m2" || s == "float8_e5m2") return DType::fp8_e5m2;
  return std::nullopt;
}

std::optional<Mask> parse_mask(std::string_view s) {
  if (s == "none") return Mask{};
  if (s == "causal" || s == "causal-tl") return Mask{MaskKind::causal_tl, 0};
  if (s == "causal-br") return Mask{MaskKind::causal_br, 0};
  constexpr std::string_view prefix = "window:";
  if (s.substr(0, prefix.size()) == prefix) {
    std::string_view num = s.substr(prefix.size());
    int64_t w = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), w);
    if (ec != std::errc() || ptr != num.data() + num.size() || w < 1) return std::nullopt;
    return Mask{MaskKind::window, w};
  }
  return std::nullopt;
}

std::optional<Mode> parse_mode(std::string_view s) {
  if (s == "fwd") return Mode::fwd;
  if (s == "bwd") return Mode::bwd;
  if (s == "fwd_bwd" || s == "fwd+bwd") return Mode::fwd_bwd;
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view s) {
  if (s == "bhsd") return Layout::bhsd;
  if (s == "bshd") return Layout::bshd;
  return std::nullopt;
}

}  // namespace attnprof
