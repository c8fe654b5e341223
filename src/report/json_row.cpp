// The JSONL journal's line: one Result per line through the row codec (attnprof/result_json.hpp).
// Whole journals are read by journal.hpp. docs/results.md is the schema.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnprof/result_json.hpp"
#include "attnprof/sink.hpp"

namespace attnprof {
namespace {

using Json = nlohmann::json;

[[noreturn]] void malformed(const std::string& what) {
  throw std::runtime_error("malformed journal line: " + what);
}

// nlohmann's parse errors read "[json.exception.parse_error.101] parse error at line 1, column
// 9: syntax error ..."; the line is always 1 here, so keep "column 9: ..." and cap the length
// (the message quotes the last token read, which can be long).
std::string describe_parse_error(const Json::parse_error& e) {
  std::string what = e.what();
  const std::size_t at = what.find("column ");
  if (at != std::string::npos) what = what.substr(at);
  constexpr std::size_t kMaxLength = 160;
  if (what.size() > kMaxLength) what = what.substr(0, kMaxLength) + "...";
  return "invalid JSON at " + what;
}

}  // namespace

std::string to_json_line(const Result& r) {
  // Invalid UTF-8 (e.g. raw bytes in an exception message) becomes U+FFFD instead of throwing:
  // a row is never lost to its text. JSON escapes newlines, so the row is always one line.
  return to_json(r).dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result from_json_line(const std::string& line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::parse_error& e) {
    malformed(describe_parse_error(e));
  }
  return result_from_json(j);
}

}  // namespace attnprof
