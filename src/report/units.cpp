#include "report/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace attnprof {
namespace {

std::string non_finite(double x) {
  if (std::isnan(x)) return "nan";
  return x > 0 ? "inf" : "-inf";
}

}  // namespace

std::string format_sig3(double x) {
  if (!std::isfinite(x)) return non_finite(x);
  if (x == 0) return "0";
  const double a = std::fabs(x);
  if (a < 1e-6 || a >= 1e15) return fmt::format("{:.2e}", x);
  const int exponent = static_cast<int>(std::floor(std::log10(a)));
  int decimals = std::max(0, 2 - exponent);
  std::string s = fmt::format("{:.{}f}", a, decimals);
  // Rounding may carry into the next decade (9.996 -> "10.00"): one decimal fewer then.
  if (decimals > 0 && std::strtod(s.c_str(), nullptr) >= std::pow(10.0, exponent + 1)) {
    --decimals;
    s = fmt::format("{:.{}f}", a, decimals);
  }
  return x < 0 ? "-" + s : s;
}

std::string format_power(double exponent) {
  const double e = std::abs(exponent) < 0.005 ? 0.0 : exponent;
  return fmt::format("N^{:.2f}", e);
}

std::string format_times(double x) {
  return format_sig3(x) + "×";
}

std::string format_duration_us(double us) {
  if (!std::isfinite(us)) return non_finite(us);
  if (us == 0) return "0 µs";
  const double a = std::fabs(us);
  // Thresholds sit half a unit of the last printed digit below 1000, so that a value that would
  // round to "1000 µs" is printed as "1.00 ms" instead.
  if (a < 0.9995) return format_sig3(us * 1e3) + " ns";
  if (a < 999.5) return format_sig3(us) + " µs";
  if (a < 999.5e3) return format_sig3(us * 1e-3) + " ms";
  return format_sig3(us * 1e-6) + " s";
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return non_finite(bytes);
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = std::fabs(bytes);
  if (v < 1024) return fmt::format("{:.0f} B", bytes);
  std::size_t unit = 0;
  while (unit + 1 < kUnits.size() && (unit == 0 || v >= 1023.5)) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{}{} {}", bytes < 0 ? "-" : "", format_sig3(v), kUnits[unit]);
}

std::string format_error(double err) {
  if (!std::isfinite(err)) return non_finite(err);
  if (err == 0) return "0";
  return fmt::format("{:.1e}", err);
}

std::size_t display_width(std::string_view utf8) {
  return static_cast<std::size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // not a continuation byte
  }));
}

std::string truncate_to_width(std::string_view s, std::size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width == 0) return {};
  std::size_t columns = 0;
  std::size_t end = 0;
  for (; end < s.size(); ++end) {
    const bool starts_code_point = (static_cast<unsigned char>(s[end]) & 0xC0) != 0x80;
    if (starts_code_point) {
      if (columns == width - 1) break;  // keep one column for the ellipsis
      ++columns;
    }
  }
  return std::string(s.substr(0, end)) + "…";
}

std::string one_line(std::string_view s) {
  std::string out(s);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  return out;
}

std::string format_rate(double x) {
  if (x >= 1e9) return format_sig3(x / 1e9) + " G";
  if (x >= 1e6) return format_sig3(x / 1e6) + " M";
  if (x >= 1e3) return format_sig3(x / 1e3) + " k";
  return format_sig3(x);
}

}  // namespace attnprof
