// The HTML report's charts: each figure's data as JSON in the page, drawn in the browser by the
// charting library the page inlines (report.hpp ChartLibrary) and a short script of ours. Hover
// shows values, a click on a legend entry hides that provider, axes are logarithmic where the
// figure says so. Nothing is fetched when the page is viewed.
#pragma once

#include <string>
#include <vector>

#include "attnprof/report.hpp"
#include "report/report_model.hpp"

namespace attnprof {

// The figures as one JSON array: id, title, axis labels and scales, a reference line, and each
// series' name, colour, style and points (a point a log axis cannot show is left out). Text that
// could end the page's <script> is escaped.
std::string chart_data_json(const std::vector<const Figure*>& figures);

// The page's "Charts" section: a canvas per figure, grouped as the model groups them, then the
// data, the library and the script that draws them. The script marks its work on the page for
// whoever checks it (tests/browser/check_report.py): <body data-charts-drawn="K/N"> once the N
// charts are built, K of them with points on a painted canvas; an error of any script on the page
// is written into #attnprof-errors and counted in data-chart-errors. Without a library the
// section says why in one line and which package brings it.
std::string charts_html(const ReportModel& m, const ChartLibrary& library);

}  // namespace attnprof
