// The report as one self-contained HTML page: inline CSS, the charts drawn in the browser by the
// charting library inlined in it (html_charts.hpp), no external resources, so the file can be
// mailed, archived or attached to a CI run and opened with no network.
#include <fmt/format.h>

#include "attnprof/report.hpp"
#include "report/html_charts.hpp"
#include "report/report_model.hpp"

namespace attnprof {

namespace {

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       margin: 0 auto; max-width: 1360px; padding: 24px 32px 64px; }
h1 { font-size: 26px; margin: 0 0 8px; }
h2 { font-size: 20px; margin: 36px 0 10px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 24px 0 8px; }
ul.summary { color: #444; padding-left: 20px; margin: 4px 0; }
ul.findings li { margin: 6px 0; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f3f3f5;
       padding: 1px 4px; border-radius: 3px; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; }
figure { margin: 0; border: 1px solid #e5e5e5; border-radius: 6px; padding: 8px; background: #fff; }
figure .canvas { position: relative; height: 400px; }
figure.wide { grid-column: 1 / -1; max-width: 1100px; }
figure.wide .canvas { height: 540px; }
figcaption { font-size: 12px; color: #666; margin-top: 4px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 8px 0; }
th, td { border: 1px solid #e2e2e2; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f8; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fafafa; }
.note { color: #8a5a00; background: #fff7e6; border: 1px solid #f3d9a4; padding: 6px 10px;
        border-radius: 4px; }
.wide { overflow-x: auto; }
footer { margin-top: 40px; color: #888; font-size: 12px; }
)css";

// "Fastest provider per shape" -> "fastest-provider-per-shape": a section's id.
std::string slug(const std::string& heading) {
  std::string out;
  for (char c : heading) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Each part of the page is a <section> with an id (answer, findings, seeds, charts, providers, a
// table's heading, provenance), so a link can point at it.
std::string section(const std::string& id, const std::string& heading, const std::string& body) {
  return fmt::format("\n<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", id, html_escape(heading),
                     body);
}

std::string section_html(const TableSection& t, const std::string& id = "") {
  std::string out;
  if (!t.intro.empty()) out += "<p>" + html_escape(t.intro) + "</p>\n";
  out += "<div class=\"wide\">\n" + render_html(t.table) + "</div>\n";
  if (!t.notes.empty()) {
    out += "<ul class=\"summary\">\n";
    for (const std::string& n : t.notes) out += "<li>" + finding_html(n) + "</li>\n";
    out += "</ul>\n";
  }
  return section(id.empty() ? slug(t.heading) : id, t.heading, out);
}

std::string findings_html(const std::vector<Finding>& findings, const char* css) {
  std::string out = fmt::format("<ul class=\"{}\">\n", css);
  for (const Finding& f : findings) out += "<li>" + finding_html(f.text) + "</li>\n";
  return out + "</ul>\n";
}

}  // namespace

std::string render_html_report(const ReportModel& m, const ChartLibrary& library) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      html_escape(m.title), kStyle, html_escape(m.title));
  out += section_html(m.answer, "answer");
  out += section("findings", "Findings",
                 m.headline.empty() ? "<p>No findings: the rows compare nothing.</p>\n"
                                    : findings_html(m.headline, "findings"));
  if (!m.seeds.table.rows.empty()) out += section_html(m.seeds, "seeds");
  out += charts_html(m, library);
  if (!m.providers.empty() || !m.across.empty()) {
    std::string body;
    for (const ProviderSection& p : m.providers) {
      body += fmt::format("<h3><code>{}</code></h3>\n", html_escape(p.provider));
      body += findings_html(p.findings, "findings");
    }
    if (!m.across.empty())
      body += "<h3>Across providers</h3>\n" + findings_html(m.across, "findings");
    out += section("providers", "Per provider", body);
  }
  for (const TableSection& t : m.tables) out += section_html(t);
  std::string provenance = "<ul class=\"summary\">\n";
  for (const std::string& line : m.provenance)
    provenance += "<li>" + finding_html(line) + "</li>\n";
  out += section("provenance", "Provenance", provenance + "</ul>\n");
  out += fmt::format(
      "\n<footer>Generated by attnprof report.{}</footer>\n</body>\n</html>\n",
      library.found ? fmt::format(" Charts drawn by Chart.js {}, inlined from {}.",
                                  html_escape(library.version), html_escape(library.path.string()))
                    : "");
  return out;
}

std::string html_report(const std::vector<Result>& rows, const ReportOptions& options,
                        const ChartLibrary& library) {
  return render_html_report(build_report_model(rows, options), library);
}

}  // namespace attnprof
