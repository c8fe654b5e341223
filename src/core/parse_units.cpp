#include "attnprof/parse_units.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace attnprof {

namespace {

// Splits "12.5GiB" into 12.5 and "GiB"; throws when there is no leading number.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view allowed) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, v);
  if (i == 0 || ec != std::errc() || ptr != text.data() + i || !std::isfinite(v)) {
    throw std::invalid_argument(fmt::format("'{}' is not a quantity (allowed: {})", text, allowed));
  }
  return {v, text.substr(i)};
}

}  // namespace

int64_t parse_bytes(std::string_view text) {
  constexpr std::string_view allowed = "a number with B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
  auto [v, unit] = split_number(text, allowed);
  double mult = 0;
  if (unit.empty())
    throw std::invalid_argument(fmt::format("'{}' has no unit (allowed: {})", text, allowed));
  if (unit == "B")
    mult = 1;
  else if (unit == "KB" || unit == "kB")
    mult = 1e3;
  else if (unit == "MB")
    mult = 1e6;
  else if (unit == "GB")
    mult = 1e9;
  else if (unit == "TB")
    mult = 1e12;
  else if (unit == "KiB")
    mult = 1024.0;
  else if (unit == "MiB")
    mult = 1024.0 * 1024;
  else if (unit == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else if (unit == "TiB")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else
    throw std::invalid_argument(
        fmt::format("'{}': unknown size unit '{}' (allowed: {})", text, unit, allowed));
  const double bytes = v * mult;
  if (bytes > 9.0e18) throw std::invalid_argument(fmt::format("'{}' is too large", text));
  return static_cast<int64_t>(std::llround(bytes));
}

double parse_seconds(std::string_view text) {
  constexpr std::string_view allowed = "a number with ns, us, ms, s, min";
  auto [v, unit] = split_number(text, allowed);
  if (unit.empty())
    throw std::invalid_argument(fmt::format("'{}' has no unit (allowed: {})", text, allowed));
  if (unit == "s") return v;
  if (unit == "ms") return v * 1e-3;
  if (unit == "us") return v * 1e-6;
  if (unit == "ns") return v * 1e-9;
  if (unit == "min") return v * 60;
  throw std::invalid_argument(
      fmt::format("'{}': unknown time unit '{}' (allowed: {})", text, unit, allowed));
}

}  // namespace attnprof
