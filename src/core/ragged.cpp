#include "attnprof/ragged.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "attnprof/inputs.hpp"

namespace attnprof {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t next = s.find(sep, at);
    parts.push_back(s.substr(at, next == std::string_view::npos ? next : next - at));
    if (next == std::string_view::npos) return parts;
    at = next + 1;
  }
}

std::optional<int64_t> parse_count(std::string_view s) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 1) return std::nullopt;
  return v;
}

std::optional<double> parse_exponent(std::string_view s) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !(v > 0) || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// A parsed value: a distribution on [lo, hi] or an explicit list.
struct Parsed {
  enum { uniform, zipf, list } kind = list;
  int64_t lo = 0, hi = 0;
  double exponent = 1;
  std::vector<int64_t> values;
};

std::optional<Parsed> parse(std::string_view text, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Parsed> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const std::vector<std::string_view> parts = split(text, ':');
  Parsed p;
  if (parts[0] == "uniform" || parts[0] == "zipf") {
    p.kind = parts[0] == "uniform" ? Parsed::uniform : Parsed::zipf;
    const size_t most = p.kind == Parsed::zipf ? 4 : 3;
    if (parts.size() < 3 || parts.size() > most)
      return fail(fmt::format("'{}' is not {}:A:B{}", text, parts[0],
                              p.kind == Parsed::zipf ? "[:S]" : ""));
    const auto lo = parse_count(parts[1]), hi = parse_count(parts[2]);
    if (!lo || !hi || *lo > *hi)
      return fail(fmt::format("'{}': A and B must be key counts with 1 <= A <= B", text));
    p.lo = *lo;
    p.hi = *hi;
    if (parts.size() == 4) {
      const auto s = parse_exponent(parts[3]);
      if (!s) return fail(fmt::format("'{}': the exponent S must be a number > 0", text));
      p.exponent = *s;
    }
    return p;
  }
  if (parts.size() != 1) return fail(fmt::format("'{}' is not one of {}", text, kSeqlensChoices));
  for (std::string_view v : split(text, '/')) {
    const auto n = parse_count(v);
    if (!n && v == "0") {  // a list of counts with an empty sequence in it: name the 0
      return fail(fmt::format("'{}': a sequence of 0 keys (each count must be >= 1)", text));
    }
    if (!n) return fail(fmt::format("'{}' is not one of {}", text, kSeqlensChoices));
    p.values.push_back(*n);
  }
  return p;
}

}  // namespace

std::optional<std::string> seqlens_problem(std::string_view text) {
  std::string why;
  if (parse(text, &why)) return std::nullopt;
  return why;
}

std::vector<int64_t> seqlens_draw(std::string_view text, int64_t batch) {
  const std::optional<Parsed> p = parse(text, nullptr);
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(batch, 0)));
  if (!p) return out;
  // FNV-1a of the text: the draws depend on nothing else.
  uint64_t state = fnv1a(text);
  for (size_t b = 0; b < out.size(); ++b) {
    if (p->kind == Parsed::list) {
      out[b] = p->values[b % p->values.size()];
      continue;
    }
    state = splitmix64(state);
    const double u = double(state >> 11) * 0x1.0p-53;         // [0, 1)
    const double lo = double(p->lo), hi = double(p->hi) + 1;  // draws in [lo, hi + 1), floored
    double x = lo + u * (hi - lo);
    if (p->kind == Parsed::zipf) {  // inverse CDF of density ~ x^-S on [lo, hi + 1)
      const double s = p->exponent;
      x = s == 1 ? lo * std::pow(hi / lo, u)
                 : std::pow(std::pow(lo, 1 - s) + u * (std::pow(hi, 1 - s) - std::pow(lo, 1 - s)),
                            1 / (1 - s));
    }
    out[b] = std::clamp<int64_t>(static_cast<int64_t>(x), p->lo, p->hi);
  }
  return out;
}

int64_t SeqLens::q_total() const {
  return std::accumulate(q.begin(), q.end(), int64_t{0});
}
int64_t SeqLens::kv_total() const {
  return std::accumulate(kv.begin(), kv.end(), int64_t{0});
}

SeqLens seq_lens(const Spec& spec) {
  SeqLens l;
  const auto n = static_cast<size_t>(std::max<int64_t>(spec.batch, 0));
  if (!spec.ragged()) {
    l.q.assign(n, spec.q_len);
    l.kv.assign(n, spec.kv_len);
    return l;
  }
  l.kv = seqlens_draw(spec.seqlens, spec.batch);
  l.q.resize(n);
  for (size_t b = 0; b < n; ++b) l.q[b] = std::min(spec.q_len, l.kv[b]);
  return l;
}

Spec sequence_spec(const Spec& spec, int64_t q_len, int64_t kv_len) {
  Spec s = spec;
  s.batch = 1;
  s.q_len = q_len;
  s.kv_len = kv_len;
  s.seqlens.clear();
  return s;
}

}  // namespace attnprof
