// The report as Markdown: the same model as the HTML page, plots linked as SVG files. Text that
// comes from rows (provider names, reasons, notes) is escaped; findings keep their code spans.
#include <fmt/format.h>

#include "attnprof/report.hpp"
#include "report/report_model.hpp"
#include "report/table.hpp"

namespace attnprof {

namespace {

std::string section_markdown(const TableSection& t) {
  std::string out = fmt::format("\n## {}\n\n", t.heading);
  if (!t.intro.empty()) out += t.intro + "\n\n";
  out += render_markdown(t.table);
  if (!t.notes.empty()) out += '\n';
  for (const std::string& note : t.notes) out += "- " + finding_markdown(note) + '\n';
  return out;
}

std::string findings_markdown(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += "- " + finding_markdown(f.text) + '\n';
  return out;
}

}  // namespace

std::string render_markdown_report(const ReportModel& m, const MarkdownPlots& plots) {
  std::string out = fmt::format("# {}\n", m.title);
  out += section_markdown(m.answer);
  out += "\n## Findings\n\n";
  out += m.headline.empty() ? "No findings: the rows compare nothing.\n"
                            : findings_markdown(m.headline);

  if (!m.seeds.table.rows.empty()) out += section_markdown(m.seeds);
  out += "\n## Charts\n\n";
  if (m.groups.empty()) {
    out += "No series with more than one sequence length: nothing to plot.\n";
  } else if (!plots.drawn) {
    out += fmt::format("Charts: {}.\n", plots.note);
  } else {
    for (const FigureGroup& g : m.groups) {
      out += fmt::format("### {}\n\n", markdown_escape(g.title));
      for (const Figure& f : g.figures) {
        out += fmt::format("![{}]({}/{}.svg)\n", markdown_escape(f.alt), plots.plots_dir, f.id);
      }
      out += '\n';
    }
  }

  if (!m.providers.empty() || !m.across.empty()) {
    out += "\n## Per provider\n";
    for (const ProviderSection& p : m.providers) {
      out += fmt::format("\n### `{}`\n\n", p.provider) + findings_markdown(p.findings);
    }
    if (!m.across.empty()) out += "\n### Across providers\n\n" + findings_markdown(m.across);
  }
  for (const TableSection& t : m.tables) out += section_markdown(t);
  out += "\n## Provenance\n\n";
  for (const std::string& line : m.provenance) out += "- " + finding_markdown(line) + '\n';
  return out;
}

std::string markdown_report(const std::vector<Result>& rows, const ReportOptions& options,
                            const MarkdownPlots& plots) {
  return render_markdown_report(build_report_model(rows, options), plots);
}

}  // namespace attnprof
