// The figures of the reports as data (PlotSpec): the HTML page draws them in the browser
// (html_charts.hpp); for the Markdown file gnuplot (its svg terminal), run as a subprocess where
// it is installed, draws them as SVG files. Nothing here draws a chart itself.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnprof {

// How a series is drawn: a line through its points (a provider against N), the points alone (a
// scatter: the roofline's rows), or a dashed grey line (a ceiling).
enum class PlotStyle { linespoints, points, ceiling };

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
  int color = 0;                                  // index into the report's palette
  PlotStyle style = PlotStyle::linespoints;
};

struct PlotSpec {
  std::string title;
  std::string x_label, y_label;
  bool log_x = true, log_y = true;
  std::optional<double> reference_y;  // a dashed horizontal line (speedup 1)
  std::vector<PlotSeries> series;
  int width = 640, height = 400;  // pixels of the SVG
  bool key_right = false;         // the key beside the plot (many series), not below it
};

// The program that draws: $ATTNPROF_GNUPLOT when set (a path or a name on PATH), else "gnuplot".
// `available` is false, with the reason in words, when it does not run.
struct Plotter {
  std::string program;
  bool available = false;
  std::string reason;   // why not, when !available
  std::string version;  // "gnuplot 5.4 patchlevel 4"
};
Plotter find_plotter();

// The gnuplot script that draws `plot` as SVG into `svg_path`. Points that a log axis cannot
// show (<= 0, non-finite) are left out.
std::string gnuplot_script(const PlotSpec& plot, const std::string& svg_path);

// Runs the plotter on the script in a private temporary directory and returns the SVG document.
// Throws std::runtime_error with gnuplot's first error line when it fails.
std::string render_svg(const Plotter& plotter, const PlotSpec& plot);

// The palette (hex "#rrggbb"), colour-blind safe; index modulo its size.
std::string palette_color(int index);

}  // namespace attnprof
