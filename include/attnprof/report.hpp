// `attnprof report`: a self-contained HTML page and a Markdown file from a run's rows, with
// plots against N per provider (drawn by gnuplot), tables and generated "Key Findings".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

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

struct ReportOptions {
  std::string title = "attnprof report";
  std::string source;    // what the rows came from: a journal's name or "run 12 (...)"
  std::string baseline;  // provider speedups are measured against; empty: the device's naive
  std::optional<TuneSummary> tune;  // `report --tune`: a finding per provider and a table
};

// How the figures appear in Markdown: as SVG files in `plots_dir` (relative to the Markdown
// file), or, when `drawn` is false, omitted with `note` saying why.
struct MarkdownPlots {
  bool drawn = false;
  std::string plots_dir;
  std::string note;
};

// Throws what markdown_report() would for these rows, before anything is drawn or written: a
// command checks its input before its work starts.
void check_reportable(const std::vector<Result>& rows, const ReportOptions& options);

// The reports as text. Throws std::invalid_argument when `options.baseline` names a provider
// without passed rows, and std::runtime_error when no row passed (nothing to report on).
std::string markdown_report(const std::vector<Result>& rows, const ReportOptions& options,
                            const MarkdownPlots& plots);
// `svgs[i]` is figure i as inline SVG; fewer entries than figures (none, when gnuplot is
// missing) leave the rest out with `note` saying why.
std::string html_report(const std::vector<Result>& rows, const ReportOptions& options,
                        const std::vector<std::string>& svgs, const std::string& note);

struct ReportFiles {
  std::filesystem::path html;      // empty: no HTML
  std::filesystem::path markdown;  // empty: no Markdown; its plots go to <stem>-plots/
};

// Why the plots cannot be drawn here (gnuplot missing or not running), or "" when they can:
// commands that end in a report say so before their work starts.
std::string plots_unavailable();

// Draws the plots with gnuplot and writes the requested files. Returns warnings in words (gnuplot
// missing or failing: the report is still written, with its tables, and says so). Throws as
// markdown_report does, and std::runtime_error when a file cannot be written.
std::vector<std::string> write_report(const std::vector<Result>& rows, const ReportOptions& options,
                                      const ReportFiles& files);

}  // namespace attnprof
