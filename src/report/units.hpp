// Human-readable numbers for the console and Markdown reporters: durations, byte sizes, rates.
// Machine formats (JSONL, CSV) never use these; they write plain numbers in fixed units.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnprof {

// A value with three significant digits and no exponent for |x| in [1e-6, 1e15), e.g. "1.23",
// "12.3", "123", "4812", "0.00123". "nan", "inf" and "-inf" for non-finite values.
std::string format_sig3(double x);

// A duration given in microseconds, scaled to ns, µs, ms or s with three significant digits:
// "850 ns", "12.3 µs", "1.23 ms", "2.45 s".
std::string format_duration_us(double us);
// A ratio to three significant digits with a multiplication sign: "1.54×".
std::string format_times(double x);

// A growth exponent to two decimals, "N^2.00"; a fit of flat data that comes out at -1e-6 is
// "N^0.00", not "N^-0.00".
std::string format_power(double exponent);

// A byte count in B, KiB, MiB, GiB or TiB (powers of 1024): "512 B", "1.50 KiB", "12.0 MiB".
std::string format_bytes(double bytes);
// "1.23 M" for a rate in units per second (k, M, G: powers of 1000).
std::string format_rate(double per_second);

// A relative error in scientific notation with two significant digits: "3.1e-04".
std::string format_error(double err);

// Columns a UTF-8 string takes on a terminal: one per code point (no wide glyphs here).
std::size_t display_width(std::string_view utf8);

// `s` cut to at most `width` columns, ending in "…" when cut. Never splits a code point.
std::string truncate_to_width(std::string_view s, std::size_t width);

// `s` on one line: CR, LF and tabs become spaces (reasons may carry exception text).
std::string one_line(std::string_view s);

}  // namespace attnprof
