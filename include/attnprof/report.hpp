// `attnprof report`: a self-contained HTML page and a Markdown file from a run's rows: the answer
// per shape class first, findings, interactive charts (a charting library inlined in the page),
// tables; the Markdown file with the charts as SVG files where gnuplot runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"

namespace attnprof {

// What `attnprof tune --json` answered, per provider: the batch to deploy under its limits.
struct TuneAnswer {
  std::string provider;
  std::string shape;     // the spec's label at the start value ("B1 H16 N1024 D64 fp16 none fwd")
  std::string axis;      // "batch" or "seq"
  std::string boundary;  // why the search stopped above `largest`, or why nothing fits
  std::optional<int64_t> largest, optimal;
  int64_t points = 0;  // values measured
  // At the optimum (the largest value for "seq"), when one fits.
  double tokens_per_s = 0, p95_us = 0;
  int64_t samples = 0, peak_bytes = 0;
  bool noisy = false;     // the figures at the optimum are from a noisy point
  bool complete = true;   // false: a signal stopped this search before it ended
};
struct TuneSummary {
  std::string stopped_by;  // "SIGINT", "SIGTERM" when a signal stopped the tune; "" otherwise
  std::optional<int64_t> max_memory_bytes;
  std::optional<double> max_p95_us;
  std::vector<TuneAnswer> answers;
};
// Reads a `tune --json` file; throws std::runtime_error naming the file and what is wrong.
TuneSummary read_tune_summary(const std::filesystem::path& path);

// A provider as `attnprof list` shows it on this machine: the seeds' comparison says with it why
// a system has no rows.
struct CatalogEntry {
  std::string name;
  DeviceKind device = DeviceKind::cpu;
  Availability availability;
};

struct ReportOptions {
  std::string title = "attnprof report";
  std::string source;    // what the rows came from: a journal's name or "run 12 (...)"
  std::string baseline;  // provider speedups are measured against; empty: the device's naive
  std::optional<TuneSummary> tune;    // `report --tune`: a finding per provider and a table
  std::vector<CatalogEntry> catalog;  // every provider `attnprof list` names here
  std::string python_unavailable;     // why it names no Python provider; "" when it does
};

// How the figures appear in Markdown: as SVG files in `plots_dir` (relative to the Markdown
// file), or, when `drawn` is false, left out with `note` saying why and where they are instead.
struct MarkdownPlots {
  bool drawn = false;
  std::string plots_dir;
  std::string note;
};

// The charting library the HTML report inlines, so the page draws its charts with nothing but a
// browser and no network: Chart.js 3 or 4 (its UMD build). Looked for at run time in this order:
// $ATTNPROF_CHARTJS when set (that file alone); the copy installed beside attnprof
// (<prefix>/share/attnprof/chart.min.js); the copy the build made of the one it found
// (CMakeLists.txt); Debian's libjs-chart.js (/usr/share/javascript/chart.js/). Never part of the
// repository: a registry provides it.
struct ChartLibrary {
  bool found = false;
  std::filesystem::path path;
  std::string version;  // "3.9.1"
  std::string script;   // the library's text, as the page inlines it
  std::string reason;   // when not found: what was looked at and which package to install
};
ChartLibrary find_chart_library();

// Throws what markdown_report() would for these rows, before anything is drawn or written: a
// command checks its input before its work starts.
void check_reportable(const std::vector<Result>& rows, const ReportOptions& options);

// The reports as text. Throws std::invalid_argument when `options.baseline` names a provider
// without passed rows, and std::runtime_error when no row passed (nothing to report on).
std::string markdown_report(const std::vector<Result>& rows, const ReportOptions& options,
                            const MarkdownPlots& plots);
// The page draws its charts with `library` (its text inlined); without it the page says why and
// keeps the rest.
std::string html_report(const std::vector<Result>& rows, const ReportOptions& options,
                        const ChartLibrary& library);

struct ReportFiles {
  std::filesystem::path html;      // empty: no HTML
  std::filesystem::path markdown;  // empty: no Markdown; its plots go to <stem>-plots/
};

// Why the HTML report of a run could not draw its charts here (no charting library), or "" when
// it can: commands that end in a report say so before their work starts.
std::string charts_unavailable();

// Writes the requested files: the HTML page with its charts inlined, the Markdown file with SVG
// plots drawn by gnuplot where it runs. Returns warnings in words (no charting library for the
// HTML, gnuplot missing or failing for the Markdown: the report is still written, with its tables,
// and says so). Throws as markdown_report does, and std::runtime_error when a file cannot be
// written.
std::vector<std::string> write_report(const std::vector<Result>& rows, const ReportOptions& options,
                                      const ReportFiles& files);

}  // namespace attnprof
