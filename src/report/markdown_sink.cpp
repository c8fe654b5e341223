// A Markdown table of the results with a short legend, for READMEs, issues and bench/ notes.
// Cells are padded so the raw text lines up too; text is escaped (table.hpp markdown_escape). The
// spec's columns are the axes whose values differ between the rows (spec_columns.hpp); the legend
// gives the others.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "attnprof/model.hpp"
#include "attnprof/sink.hpp"
#include "report/measured.hpp"
#include "report/spec_columns.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace attnprof {
namespace {

// The columns after the spec's; text left-aligned, numbers right-aligned.
const std::vector<std::string> kHeader = {"status", "median",       "p95",      "TFLOP/s",
                                          "GB/s",   "extra memory", "rel. err", "note"};
const std::vector<bool> kRightAligned = {false, true, true, true, true, true, true, false};

// Why a row is not a plain pass: the reason of a non-passed row, the noise of a noisy one.
std::string note(const Result& r) {
  if (r.status != Status::passed) return r.reason;
  if (has_timing(r) && r.timing.noisy) {
    return fmt::format("noisy: relative noise {:.1f}% when sampling stopped ({})",
                       100 * r.timing.rel_noise, r.timing.stop_reason);
  }
  return "";
}

std::vector<std::string> cells(const Result& r, const std::vector<const Axis*>& spec) {
  const bool timed = has_timing(r);
  const std::string noisy = timed && r.timing.noisy ? "~" : "";
  std::vector<std::string> c = {r.provider};
  for (const Axis* a : spec) c.push_back(spec_cell(*a, r.spec));
  c.insert(c.end(), {std::string(to_string(r.status)),
                     timed ? noisy + format_duration_us(r.timing.median_us) : "-",
                     timed ? format_duration_us(r.timing.p95_us) : "-",
                     timed ? format_sig3(r.tflops) : "-", timed ? format_sig3(r.gbps) : "-",
                     has_memory(r) ? format_bytes(static_cast<double>(r.memory.extra_bytes)) : "-",
                     has_verify(r) ? format_error(r.verify.rel_l2_err) : "-", note(r)});
  return c;
}

// The table, its cells escaped (table.hpp render_markdown).
std::string table(const std::vector<Result>& results, const std::vector<const Axis*>& spec) {
  Table t;
  t.header = {"provider"};
  t.right = {false};
  for (const Axis* a : spec) {
    t.header.emplace_back(a->json);
    t.right.push_back(a->kind == AxisKind::integer || a->kind == AxisKind::number);
  }
  t.header.insert(t.header.end(), kHeader.begin(), kHeader.end());
  t.right.insert(t.right.end(), kRightAligned.begin(), kRightAligned.end());
  for (const Result& r : results) t.add(cells(r, spec));
  return render_markdown(t);
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

std::string legend(const std::vector<Result>& results, const std::vector<const Axis*>& fixed) {
  std::vector<std::string> conventions =
      distinct(results, [](const Result& r) -> const std::string& { return r.flop_convention; });
  if (conventions.empty()) conventions.emplace_back(kFlopConvention);
  const std::vector<std::string> devices =
      distinct(results, [](const Result& r) -> const std::string& { return r.device; });
  const std::vector<std::string> modes =
      distinct(results, [](const Result& r) -> const std::string& { return r.timing.mode; });
  std::string out;
  if (!results.empty() && !fixed.empty()) {
    std::vector<std::string> same;
    for (const Axis* a : fixed)
      same.push_back(fmt::format("{} {}", a->json, spec_cell(*a, results.front().spec)));
    out +=
        fmt::format("- Every row: {}\n", markdown_escape(fmt::format("{}", fmt::join(same, ", "))));
  }
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
    out +=
        "- ~ marks a noisy median: sampling stopped at its limit with too few samples or the "
        "noise above the bound (its stop reason says which)\n";
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
  const SpecAxesSplit spec = split_spec_axes(results);
  return table(results, spec.varying) + '\n' + legend(results, spec.fixed);
}

std::unique_ptr<Sink> make_markdown_sink(const std::filesystem::path& path) {
  return std::make_unique<MarkdownSink>(path);
}

}  // namespace attnprof
