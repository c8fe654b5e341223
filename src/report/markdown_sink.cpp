// A Markdown table of the results with a short legend, for READMEs, issues and bench/ notes.
// Cells are padded so the raw text lines up too; '|' in text is escaped.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "attnprof/model.hpp"
#include "attnprof/sink.hpp"
#include "report/measured.hpp"
#include "report/units.hpp"

namespace attnprof {
namespace {

constexpr std::size_t kColumns = 10;
using Cells = std::array<std::string, kColumns>;

const Cells kHeader = {"provider", "shape", "status",       "median",   "p95",
                       "TFLOP/s",  "GB/s",  "extra memory", "rel. err", "note"};
// Text columns left-aligned, numbers right-aligned.
constexpr std::array<bool, kColumns> kRightAligned = {false, false, false, true, true,
                                                      true,  true,  true,  true, false};

std::string escape(std::string_view text) {
  std::string out;
  for (char c : one_line(text)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Why a row is not a plain pass: the reason of a non-passed row, the noise of a noisy one.
std::string note(const Result& r) {
  if (r.status != Status::passed) return r.reason;
  if (has_timing(r) && r.timing.noisy) {
    return fmt::format("noisy: relative noise {:.1f}% when sampling stopped ({})",
                       100 * r.timing.rel_noise, r.timing.stop_reason);
  }
  return "";
}

Cells cells(const Result& r) {
  const bool timed = has_timing(r);
  const std::string noisy = timed && r.timing.noisy ? "~" : "";
  return {escape(r.provider),
          escape(r.spec.label()),
          std::string(to_string(r.status)),
          timed ? noisy + format_duration_us(r.timing.median_us) : "-",
          timed ? format_duration_us(r.timing.p95_us) : "-",
          timed ? format_sig3(r.tflops) : "-",
          timed ? format_sig3(r.gbps) : "-",
          has_memory(r) ? format_bytes(static_cast<double>(r.memory.extra_bytes)) : "-",
          has_verify(r) ? format_error(r.verify.rel_l2_err) : "-",
          escape(note(r))};
}

std::string table(const std::vector<Result>& results) {
  std::vector<Cells> rows;
  rows.reserve(results.size());
  for (const Result& r : results) rows.push_back(cells(r));
  std::array<std::size_t, kColumns> width{};
  for (std::size_t c = 0; c < kColumns; ++c) {
    width[c] = std::max<std::size_t>(display_width(kHeader[c]), 3);  // "---" at least
    for (const Cells& row : rows) width[c] = std::max(width[c], display_width(row[c]));
  }
  auto line = [&](const Cells& row) {
    std::string out = "|";
    for (std::size_t c = 0; c < kColumns; ++c) {
      const std::string pad(width[c] - display_width(row[c]), ' ');
      out += ' ' + (kRightAligned[c] ? pad + row[c] : row[c] + pad) + " |";
    }
    return out + '\n';
  };
  std::string out = line(kHeader);
  out += '|';
  for (std::size_t c = 0; c < kColumns; ++c) {
    out += ' ' + std::string(width[c] - 1, '-') + (kRightAligned[c] ? ":" : "-") + " |";
  }
  out += '\n';
  for (const Cells& row : rows) out += line(row);
  return out;
}

// Distinct non-empty values of one field, in order of first appearance.
template <class Field>
std::vector<std::string> distinct(const std::vector<Result>& results, Field field) {
  std::vector<std::string> seen;
  for (const Result& r : results) {
    const std::string& value = field(r);
    if (!value.empty() && std::find(seen.begin(), seen.end(), value) == seen.end()) {
      seen.push_back(value);
    }
  }
  return seen;
}

std::string legend(const std::vector<Result>& results) {
  std::vector<std::string> conventions =
      distinct(results, [](const Result& r) -> const std::string& { return r.flop_convention; });
  if (conventions.empty()) conventions.emplace_back(kFlopConvention);
  const std::vector<std::string> devices =
      distinct(results, [](const Result& r) -> const std::string& { return r.device; });
  const std::vector<std::string> modes =
      distinct(results, [](const Result& r) -> const std::string& { return r.timing.mode; });
  std::string out;
  if (!devices.empty()) out += fmt::format("- Device: {}\n", fmt::join(devices, ", "));
  if (!modes.empty()) {
    out += fmt::format("- Timing: {} (median and p95 per launch)\n", fmt::join(modes, ", "));
  }
  out += fmt::format("- TFLOP/s = FLOPs / median, FLOPs counted as `{}`\n",
                     fmt::join(conventions, "`, `"));
  out += fmt::format(
      "- GB/s = minimum bytes / median (`{}`; 1 GB = 10^9 bytes)\n"
      "- extra memory = peak memory held by the point - inputs - outputs\n"
      "- rel. err = worst relative L2 error over the checked rows, against an fp64 reference\n",
      kByteConvention);
  const bool any_noisy = std::any_of(results.begin(), results.end(), [](const Result& r) {
    return has_timing(r) && r.timing.noisy;
  });
  if (any_noisy)
    out += "- ~ marks a noisy median: sampling stopped with the noise above the bound\n";
  return out;
}

class MarkdownSink final : public Sink {
 public:
  explicit MarkdownSink(std::filesystem::path path) : path_(std::move(path)) {}
  void write(const Result& r) override { results_.push_back(r); }
  // The table's column widths depend on every row, so the file is written once, at the end.
  void end() override {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << to_markdown(results_);
    out.flush();
    if (!out) {
      throw std::runtime_error(
          fmt::format("cannot write Markdown {}: {}", path_.string(), std::strerror(errno)));
    }
  }

 private:
  std::filesystem::path path_;
  std::vector<Result> results_;
};

}  // namespace

std::string to_markdown(const std::vector<Result>& results) {
  return table(results) + '\n' + legend(results);
}

std::unique_ptr<Sink> make_markdown_sink(const std::filesystem::path& path) {
  return std::make_unique<MarkdownSink>(path);
}

}  // namespace attnprof
