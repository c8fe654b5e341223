// What a report holds, independent of how it is written: summary lines, findings, figures per
// series and tables. The Markdown and HTML writers render the same model.
#pragma once

#include <string>
#include <vector>

#include "attnprof/report.hpp"
#include "report/findings.hpp"
#include "report/plots.hpp"
#include "report/table.hpp"

namespace attnprof {

struct Figure {
  std::string id;   // "fig01-latency": unique, a file name stem
  std::string alt;  // one line describing the figure
  PlotSpec plot;
};

struct FigureGroup {
  std::string title;  // the series' title
  std::vector<Figure> figures;
};

struct TableSection {
  std::string heading;
  std::string intro;  // a sentence above the table, may be empty
  Table table;
  std::vector<std::string> notes;  // bullets below the table
};

// A provider's findings, further down the report: what binds it, what its memory grows as,
// what it costs against another form of the problem.
struct ProviderSection {
  std::string provider;
  std::vector<Finding> findings;
};

// In the order a report shows it: the answer first, provenance last.
struct ReportModel {
  std::string title;
  TableSection answer;            // the fastest per shape class (answer.hpp)
  std::vector<Finding> headline;  // at most kMaxHeadline sentences a user acts on
  TableSection seeds;             // the seeds' systems at one reference shape (seeds.hpp)
  std::vector<FigureGroup> groups;
  std::vector<ProviderSection> providers;
  std::vector<Finding> across;  // findings about several providers at once
  std::vector<TableSection> tables;
  std::vector<std::string> provenance;  // "Source: ...", "Devices: ...", ...
  std::string baseline;                 // empty: none

  std::vector<const Figure*> figures() const;    // every figure, in order
  std::vector<const Finding*> findings() const;  // every finding, in order
};

// Throws as markdown_report() does (no passed row; an unknown baseline).
ReportModel build_report_model(const std::vector<Result>& rows, const ReportOptions& options);

// The figures of one series group (latency, TFLOP/s, memory, speedup, % of peak).
std::vector<Figure> series_figures(const SeriesGroup& group, const std::string& baseline,
                                   const std::vector<std::string>& providers, int& next_id);

// The roofline figures (report_roofline.cpp): every passed point by arithmetic intensity against
// achieved TFLOP/s, one figure per device and dtype, under the rows' measured ceilings.
FigureGroup roofline_figures(const std::vector<Result>& rows,
                             const std::vector<std::string>& providers, int& next_id);

// `report --tune` (tune_answers.cpp): a finding per provider and the table of the answers.
std::vector<Finding> tune_findings(const TuneSummary& tune);
// The tune's limits in words: "14.0 GiB of peak memory and a p95 of 100 ms".
std::string tune_limits(const TuneSummary& tune);
TableSection tune_table(const TuneSummary& tune);

// The report's tables (fastest per shape, memory growth, not supported, did not pass, all rows).
std::vector<TableSection> report_tables(const std::vector<Result>& rows,
                                        const std::string& baseline);

// The writers (markdown_report.cpp, html_report.cpp) on a built model.
std::string render_markdown_report(const ReportModel& m, const MarkdownPlots& plots);
std::string render_html_report(const ReportModel& m, const ChartLibrary& library);

// `code` spans of a finding (`x`) as <code>x</code>, the rest escaped.
std::string finding_html(const std::string& text);
// The same for Markdown: spans kept, the rest escaped (table.hpp markdown_escape).
std::string finding_markdown(const std::string& text);

}  // namespace attnprof
