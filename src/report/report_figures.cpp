// The figures of one series: latency, TFLOP/s, memory, speedup and % of peak against N.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "report/report_model.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

using Value = std::function<std::optional<double>(const Result&)>;

int color_of(const std::vector<std::string>& providers, const std::string& p) {
  return static_cast<int>(std::find(providers.begin(), providers.end(), p) - providers.begin());
}

// One line per provider of `value` against N (rows without a value are left out).
std::vector<PlotSeries> lines(const SeriesGroup& g, const std::vector<std::string>& providers,
                              const Value& value,
                              const std::map<std::string, std::string>& names = {}) {
  std::vector<PlotSeries> out;
  for (const std::string& p : g.providers) {
    PlotSeries s;
    s.name = names.contains(p) ? names.at(p) : p;
    s.color = color_of(providers, p);
    for (const Result* r : g.rows.at(p)) {
      if (auto y = value(*r)) s.points.emplace_back(static_cast<double>(row_n(*r)), *y);
    }
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

double max_of(const SeriesGroup& g, const std::function<double(const Result&)>& f) {
  double m = 0;
  for (const auto& [p, rows] : g.rows) {
    for (const Result* r : rows) m = std::max(m, f(*r));
  }
  return m;
}

// A unit for values up to `largest`: its name and the factor values are divided by.
std::pair<std::string, double> time_unit(double largest_us) {
  if (largest_us >= 1e6) return {"s", 1e6};
  if (largest_us >= 1e3) return {"ms", 1e3};
  return {"µs", 1};
}

std::pair<std::string, double> byte_unit(double largest) {
  if (largest >= double(int64_t{1} << 30)) return {"GiB", double(int64_t{1} << 30)};
  if (largest >= double(1 << 20)) return {"MiB", double(1 << 20)};
  return {"KiB", 1024.0};
}

}  // namespace

std::vector<Figure> series_figures(const SeriesGroup& g, const std::string& baseline,
                                   const std::vector<std::string>& providers, int& next_id) {
  std::vector<Figure> out;
  const auto add = [&](const std::string& kind, const std::string& what, PlotSpec plot) {
    if (plot.series.empty()) return;
    plot.x_label = g.x_label();
    plot.title = fmt::format("{}: {}", what, g.title);
    out.push_back({fmt::format("fig{:02}-{}", next_id++, kind),
                   fmt::format("{} against N per provider, {}", what, g.title), std::move(plot)});
  };

  const auto [tu, tf] = time_unit(max_of(g, [](const Result& r) { return r.timing.median_us; }));
  PlotSpec latency;
  latency.y_label = fmt::format("median latency ({})", tu);
  latency.series = lines(g, providers, [f = tf](const Result& r) -> std::optional<double> {
    return r.timing.median_us / f;
  });
  add("latency", "Latency", std::move(latency));

  PlotSpec tflops;
  tflops.y_label = "TFLOP/s";
  tflops.series = lines(g, providers, [](const Result& r) -> std::optional<double> {
    return r.tflops > 0 ? std::optional<double>(r.tflops) : std::nullopt;
  });
  add("tflops", "TFLOP/s", std::move(tflops));

  // Peak memory, each line named with its fitted growth of extra memory where there is one.
  std::map<std::string, std::string> names;
  for (const MemoryGrowth& m : memory_growth({g})) {
    if (m.fit)
      names[m.provider] =
          fmt::format("{} (extra: {})", m.provider, describe_growth(*m.fit, m.y_min));
    if (m.no_extra) names[m.provider] = fmt::format("{} (no extra)", m.provider);
  }
  const auto [bu, bf] =
      byte_unit(max_of(g, [](const Result& r) { return double(r.memory.peak_bytes); }));
  PlotSpec memory;
  memory.y_label = fmt::format("peak memory ({})", bu);
  memory.series = lines(
      g, providers,
      [f = bf](const Result& r) -> std::optional<double> {
        return r.memory.peak_bytes > 0 ? std::optional<double>(double(r.memory.peak_bytes) / f)
                                       : std::nullopt;
      },
      names);
  add("memory", "Peak memory", std::move(memory));

  if (g.rows.contains(baseline) && g.rows.size() > 1) {
    std::map<std::string, double> base;  // spec key -> baseline median
    for (const Result* r : g.rows.at(baseline))
      base.try_emplace(r->spec.key(), r->timing.median_us);
    PlotSpec speedup;
    speedup.y_label = fmt::format("speedup over {} (×)", baseline);
    speedup.reference_y = 1.0;
    speedup.series = lines(g, providers, [&](const Result& r) -> std::optional<double> {
      const auto it = base.find(r.spec.key());
      if (r.provider == baseline || it == base.end()) return std::nullopt;
      return it->second / r.timing.median_us;
    });
    add("speedup", fmt::format("Speedup over {}", baseline), std::move(speedup));
  }

  for (const bool flops : {true, false}) {
    PlotSpec pct;
    pct.log_y = false;
    pct.y_label = flops ? "% of measured peak FLOP/s" : "% of measured peak bandwidth";
    pct.series = lines(g, providers, [flops](const Result& r) {
      return flops ? r.pct_peak_flops : r.pct_peak_bw;
    });
    add(flops ? "pct-flops" : "pct-bw", flops ? "% of peak FLOP/s" : "% of peak bandwidth",
        std::move(pct));
  }
  return out;
}

}  // namespace attnprof
