// The report as Markdown: the same model as the HTML page, plots linked as SVG files. Text that
// comes from rows (provider names, reasons, notes) is escaped; findings keep their code spans.
#include <fmt/format.h>

#include "attnprof/report.hpp"
#include "report/report_model.hpp"
#include "report/table.hpp"

namespace attnprof {

std::string render_markdown_report(const ReportModel& m, const MarkdownPlots& plots) {
  std::string out = fmt::format("# {}\n\n", m.title);
  for (const std::string& line : m.summary) out += "- " + finding_markdown(line) + '\n';

  out += "\n## Key Findings\n\n";
  if (m.findings.empty()) out += "No findings: the rows compare nothing.\n";
  for (const Finding& f : m.findings) out += "- " + finding_markdown(f.text) + '\n';

  out += "\n## Plots\n\n";
  if (m.groups.empty()) {
    out += "No series with more than one sequence length: nothing to plot.\n";
  } else if (!plots.drawn) {
    out += fmt::format("Plots omitted: {}\n", plots.note);
  } else {
    for (const FigureGroup& g : m.groups) {
      out += fmt::format("### {}\n\n", markdown_escape(g.title));
      for (const Figure& f : g.figures) {
        out += fmt::format("![{}]({}/{}.svg)\n", markdown_escape(f.alt), plots.plots_dir, f.id);
      }
      out += '\n';
    }
  }

  for (const TableSection& t : m.tables) {
    out += fmt::format("\n## {}\n\n", t.heading);
    if (!t.intro.empty()) out += t.intro + "\n\n";
    out += render_markdown(t.table);
    if (!t.notes.empty()) out += '\n';
    for (const std::string& note : t.notes) out += "- " + finding_markdown(note) + '\n';
  }
  return out;
}

std::string markdown_report(const std::vector<Result>& rows, const ReportOptions& options,
                            const MarkdownPlots& plots) {
  return render_markdown_report(build_report_model(rows, options), plots);
}

}  // namespace attnprof
