// The HTML report's charts (html_charts.hpp): the figures' data as JSON, the inlined library, and
// the script that turns each figure into a Chart.js scatter chart.
#include "report/html_charts.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "report/plots.hpp"
#include "report/table.hpp"

namespace attnprof {

namespace {

// Before the library: any error of a script on the page, or a console.error, is written into the
// page, where a reader (or the browser check) sees it.
constexpr const char* kErrorHook = R"js(
(function () {
  'use strict';
  var count = 0;
  function record(text) {
    count += 1;
    var box = document.getElementById('attnprof-errors');
    box.hidden = false;
    box.textContent += text + '\n';
    document.body.setAttribute('data-chart-errors', String(count));
  }
  window.addEventListener('error', function (e) {
    record(e.message + ' (' + e.filename + ':' + e.lineno + ')');
  });
  var error = console.error;
  console.error = function () {
    record(Array.prototype.join.call(arguments, ' '));
    error.apply(console, arguments);
  };
})();
)js";

// After the library: one scatter chart per figure (lines through a provider's points, points
// alone for the roofline's rows, dashed grey for a ceiling or the speedup's 1), then the count of
// charts drawn with points on a painted canvas.
constexpr const char* kDraw = R"js(
(function () {
  'use strict';
  var figures = JSON.parse(document.getElementById('attnprof-chart-data').textContent);
  var markers = ['circle', 'rect', 'triangle', 'rectRot'];
  function fmt(v) {
    var a = Math.abs(v);
    if (a >= 1000 && a < 1e7) return String(Math.round(v));
    return String(Number(v.toPrecision(3)));
  }
  function dataset(s) {
    var ceiling = s.style === 'ceiling';
    return {
      label: s.name,
      data: s.points.map(function (p) { return {x: p[0], y: p[1]}; }),
      borderColor: s.color,
      backgroundColor: s.color,
      showLine: s.style !== 'points',
      borderDash: ceiling ? [6, 4] : [],
      borderWidth: ceiling ? 1.5 : 2,
      pointRadius: ceiling ? 0 : 3,
      pointHoverRadius: ceiling ? 0 : 5,
      pointStyle: markers[s.marker % markers.length]
    };
  }
  // A log axis labels 1, 2 and 5 times a power of ten (or the given ticks, spanning just them).
  function axis(log, title, ticks) {
    var a = {
      type: log ? 'logarithmic' : 'linear',
      title: {display: true, text: title},
      ticks: {callback: function (v) {
        v = Number(v);
        if (log && !ticks) {
          var m = Math.round(v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9)));
          if (m !== 1 && m !== 2 && m !== 5) return '';
        }
        return fmt(v);
      }}
    };
    if (log) a.ticks.autoSkip = false;
    if (!log) a.beginAtZero = true;
    if (ticks) {
      a.min = ticks[0] / 1.15;
      a.max = ticks[ticks.length - 1] * 1.15;
      a.afterBuildTicks = function (scale) {
        scale.ticks = ticks.map(function (v) { return {value: v}; });
      };
    }
    return a;
  }
  function config(f) {
    var sets = f.series.map(dataset);
    var xs = [];
    f.series.forEach(function (s) {
      s.points.forEach(function (p) { if (xs.indexOf(p[0]) < 0) xs.push(p[0]); });
    });
    xs.sort(function (a, b) { return a - b; });
    if (f.reference_y !== null && xs.length > 0) {
      sets.push({
        label: '= ' + fmt(f.reference_y),
        data: [{x: xs[0], y: f.reference_y}, {x: xs[xs.length - 1], y: f.reference_y}],
        borderColor: '#555555', backgroundColor: '#555555', showLine: true,
        borderDash: [4, 4], borderWidth: 1, pointRadius: 0, pointHoverRadius: 0
      });
    }
    // A log axis of a few lengths is labelled at those lengths, not at powers of ten.
    var xticks = f.log_x && xs.length <= 12 && f.series.every(function (s) {
      return s.style === 'linespoints';
    }) ? xs : null;
    return {
      type: 'scatter',
      data: {datasets: sets},
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {x: axis(f.log_x, f.x_label, xticks), y: axis(f.log_y, f.y_label, null)},
        plugins: {
          title: {display: true, text: f.title},
          legend: {position: f.key_right ? 'right' : 'bottom', maxWidth: 420,
                   labels: {boxWidth: 14}},
          tooltip: {callbacks: {label: function (c) {
            return c.dataset.label + ': ' + fmt(c.parsed.y) + ' at ' + fmt(c.parsed.x);
          }}}
        }
      }
    };
  }
  // A canvas laid out at no size (a hidden section) has nothing painted yet: Chart.js draws it
  // when it is shown.
  function painted(canvas) {
    if (canvas.width === 0 || canvas.height === 0) return false;
    var d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
    return false;
  }
  var drawn = 0;
  figures.forEach(function (f) {
    try {  // one chart that fails leaves the others drawn, and says so on the page
      var canvas = document.getElementById(f.id + '-canvas');
      var chart = new Chart(canvas, config(f));
      var points = 0;
      chart.data.datasets.forEach(function (d, i) {
        points += chart.getDatasetMeta(i).data.length;
      });
      if (points > 0 && painted(canvas)) {
        drawn += 1;
        canvas.setAttribute('data-drawn', 'true');
      }
    } catch (e) {
      console.error(f.id + ': ' + e);
    }
  });
  document.body.setAttribute('data-charts-drawn', drawn + '/' + figures.length);
})();
)js";

// JSON inside <script>: every '<' as \u003c (only strings hold one), so nothing ends it early.
std::string script_safe(const std::string& json) {
  std::string out;
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

const char* style_name(PlotStyle s) {
  switch (s) {
    case PlotStyle::linespoints:
      return "linespoints";
    case PlotStyle::points:
      return "points";
    case PlotStyle::ceiling:
      return "ceiling";
  }
  return "linespoints";
}

// Text for a /* comment */ inside <script>: a space after every '*' and '<' so that nothing in it
// closes either.
std::string comment_safe(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '*' || c == '<') out += ' ';
  }
  return out;
}

}  // namespace

std::string chart_data_json(const std::vector<const Figure*>& figures) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const Figure* f : figures) {
    const PlotSpec& p = f->plot;
    nlohmann::ordered_json series = nlohmann::ordered_json::array();
    for (const PlotSeries& s : p.series) {
      nlohmann::ordered_json points = nlohmann::ordered_json::array();
      for (const auto& [x, y] : s.points) {
        const bool shown =
            std::isfinite(x) && std::isfinite(y) && (!p.log_x || x > 0) && (!p.log_y || y > 0);
        if (shown) points.push_back({x, y});
      }
      if (points.empty()) continue;
      series.push_back({{"name", s.name},
                        {"color", s.style == PlotStyle::ceiling ? std::string("#555555")
                                                                : palette_color(s.color)},
                        {"marker", std::abs(s.color) / 10},
                        {"style", style_name(s.style)},
                        {"points", points}});
    }
    all.push_back({{"id", f->id},
                   {"title", p.title},
                   {"x_label", p.x_label},
                   {"y_label", p.y_label},
                   {"log_x", p.log_x},
                   {"log_y", p.log_y},
                   {"reference_y", p.reference_y ? nlohmann::ordered_json(*p.reference_y)
                                                 : nlohmann::ordered_json(nullptr)},
                   {"key_right", p.key_right},
                   {"series", series}});
  }
  return script_safe(all.dump());
}

std::string charts_html(const ReportModel& m, const ChartLibrary& library) {
  const auto section = [](const std::string& body) {
    return "\n<section id=\"charts\">\n<h2>Charts</h2>\n" + body + "</section>\n";
  };
  const std::vector<const Figure*> figures = m.figures();
  if (figures.empty()) {
    return section("<p>No series with more than one sequence length: nothing to chart.</p>\n");
  }
  if (!library.found) {
    return section(
        fmt::format("<p class=\"note\">Charts omitted: {}.</p>\n", html_escape(library.reason)));
  }
  std::string out;
  out +=
      "<p>Hover a point for its values; click a provider in a legend to hide it, again to show "
      "it.</p>\n<pre id=\"attnprof-errors\" class=\"note\" hidden></pre>\n";
  for (const FigureGroup& g : m.groups) {
    out += fmt::format("<h3>{}</h3>\n<div class=\"figures\">\n", html_escape(g.title));
    for (const Figure& f : g.figures) {
      // A figure drawn wider than the default (the roofline) spans the row.
      out += fmt::format(
          "<figure id=\"{0}\" class=\"chart{1}\">\n<div class=\"canvas\"><canvas id=\"{0}-canvas\" "
          "role=\"img\" aria-label=\"{2}\"></canvas></div>\n<figcaption>{2}</figcaption>\n"
          "</figure>\n",
          f.id, f.plot.width > PlotSpec{}.width ? " wide" : "", html_escape(f.alt));
    }
    out += "</div>\n";
  }
  out += fmt::format(
      "<script type=\"application/json\" id=\"attnprof-chart-data\">{}</script>\n"
      "<script>{}</script>\n<script>/* Chart.js {} (MIT License), inlined from {} */\n{}\n"
      "</script>\n<script>{}</script>\n",
      chart_data_json(figures), kErrorHook, comment_safe(library.version),
      comment_safe(library.path.string()), library.script, kDraw);
  return section(out);
}

}  // namespace attnprof
