// Writing the report files: the model built once, then the HTML page (its charts drawn in the
// browser by the charting library it inlines) and the Markdown file (the same figures as SVG files
// in <stem>-plots/ beside it, drawn by gnuplot where it runs; else a line pointing to the HTML).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "attnprof/report.hpp"
#include "report/plots.hpp"
#include "report/report_model.hpp"

namespace attnprof {

namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) {
    throw std::runtime_error(
        fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  }
}

// Every figure as an SVG document, or none with the reason in `note`: a report either has all
// its plots or says why it has none.
std::vector<std::string> draw(const std::vector<const Figure*>& figures, std::string& note) {
  std::vector<std::string> svgs;
  if (figures.empty()) return svgs;
  const Plotter plotter = find_plotter();
  if (!plotter.available) {
    note = plotter.reason;
    return svgs;
  }
  try {
    for (const Figure* f : figures) svgs.push_back(render_svg(plotter, f->plot));
  } catch (const std::runtime_error& e) {
    svgs.clear();
    note = e.what();
  }
  return svgs;
}

}  // namespace

std::string charts_unavailable() {
  const ChartLibrary library = find_chart_library();
  return library.found ? "" : library.reason;
}

std::vector<std::string> write_report(const std::vector<Result>& rows, const ReportOptions& options,
                                      const ReportFiles& files) {
  const ReportModel model = build_report_model(rows, options);
  const std::vector<const Figure*> figures = model.figures();
  std::vector<std::string> warnings;
  bool html_charts = false;
  if (!files.html.empty()) {
    const ChartLibrary library = find_chart_library();
    html_charts = library.found;
    if (!library.found && !figures.empty()) warnings.push_back("charts omitted: " + library.reason);
    write_file(files.html, render_html_report(model, library));
  }
  if (!files.markdown.empty()) {
    std::string note;
    const std::vector<std::string> svgs = draw(figures, note);
    MarkdownPlots plots;
    plots.drawn = !svgs.empty();
    plots.plots_dir = files.markdown.stem().string() + "-plots";
    if (!plots.drawn && !figures.empty()) {
      // One line that says where the charts are instead.
      plots.note = html_charts ? fmt::format(
                                     "the charts are in the HTML report, {} (SVG files "
                                     "here need gnuplot: {})",
                                     files.html.filename().string(), note)
                               : fmt::format(
                                     "{}; the HTML report (--html) draws them in a "
                                     "browser",
                                     note);
      if (!html_charts) warnings.push_back("Markdown plots omitted: " + note);
    }
    if (plots.drawn) {
      const std::filesystem::path dir = files.markdown.parent_path() / plots.plots_dir;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) {
        throw std::runtime_error(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
      }
      for (std::size_t i = 0; i < svgs.size(); ++i) {
        write_file(dir / (figures[i]->id + ".svg"), svgs[i]);
      }
    }
    write_file(files.markdown, render_markdown_report(model, plots));
  }
  return warnings;
}

}  // namespace attnprof
