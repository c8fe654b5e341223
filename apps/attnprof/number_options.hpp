// Whole-number options with errors a person can read: "--min-samples: must be >= 1 (got 0)".
// CLI11's own checks print the type's whole range (PositiveNumber: up to 1.79769e+308, written
// out), and its unsigned conversion reads "-1" as 2^64-1 (strtoull); these parse the text here.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

namespace attnprof::cli {

// Why `text` is not a whole number in [min, max], in words ("must be >= 1 (got 0)", "must be a
// whole number (got 'abc')"); "" when it is one, stored in `out`. Decimal digits only, with a
// leading '-' for negative numbers.
template <class T>
std::string whole_number_error(std::string_view text, T& out, std::type_identity_t<T> min,
                               std::type_identity_t<T> max) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::size_t first = negative ? 1 : 0;
  if (text.size() == first || text.find_first_not_of("0123456789", first) != std::string_view::npos)
    return fmt::format("must be a whole number (got '{}')", text);
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // A number of the right form that the type cannot hold (or a negative one for an unsigned
  // type) is beyond one of the bounds: say which.
  const bool fits = ec == std::errc() && end == text.data() + text.size();
  if ((!fits && negative) || (fits && v < min)) {
    return fmt::format("must be >= {} (got {})", min, text);
  }
  if (!fits || v > max) {
    return fmt::format("must be <= {} (got {})", max, text);
  }
  out = v;
  return "";
}

// Registers option `name` storing a whole number in [min, max] into `value`; a bad value is a
// CLI11 ValidationError ("--warmup: must be >= 0 (got -1)"), i.e. a usage error.
template <class T>
CLI::Option* add_whole_number_option(CLI::App* sub, const std::string& name, T& value,
                                     const std::string& help, std::type_identity_t<T> min,
                                     std::type_identity_t<T> max = std::numeric_limits<T>::max()) {
  CLI::Option* option = sub->add_option_function<std::string>(
      name,
      [&value, name, min, max](const std::string& text) {
        const std::string why = whole_number_error(text, value, min, max);
        if (!why.empty()) throw CLI::ValidationError(name, why);
      },
      help);
  option->type_name(std::numeric_limits<T>::is_signed ? "INT" : "UINT");
  return option;
}

}  // namespace attnprof::cli
