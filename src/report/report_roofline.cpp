// The roofline figures: every passed point placed by arithmetic intensity (FLOP per minimum
// byte, docs/method.md "FLOPs" and "Bytes") against the TFLOP/s it achieved, one figure per device
// and dtype, with the measured compute and bandwidth ceilings of the rows (`attnprof peaks`) as
// the roof. Memory-bound points sit under the slope, compute-bound ones under the flat part.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "report/report_model.hpp"
#include "report/units.hpp"

namespace attnprof {

FigureGroup roofline_figures(const std::vector<Result>& rows,
                             const std::vector<std::string>& providers, int& next_id) {
  FigureGroup group;
  group.title = "Roofline";
  // Passed, timed rows by (device, dtype), in order of first appearance.
  std::vector<std::pair<std::string, DType>> order;
  std::map<std::pair<std::string, DType>, std::vector<const Result*>> by;
  for (const Result& r : rows) {
    if (r.status != Status::passed || !(r.tflops > 0) || !(r.bytes > 0) || !(r.flops > 0)) continue;
    const auto key = std::make_pair(r.device, r.spec.dtype);
    if (!by.contains(key)) order.push_back(key);
    by[key].push_back(&r);
  }
  for (const auto& key : order) {
    const auto& points = by[key];
    PlotSpec plot;
    plot.title = fmt::format("Roofline: {} {}", key.first, to_string(key.second));
    plot.x_label = "arithmetic intensity (FLOP per minimum byte)";
    plot.y_label = "achieved TFLOP/s";
    plot.width = 960;  // a dozen providers beside the plot, not under it
    plot.height = 520;
    plot.key_right = true;
    double x_lo = 0, x_hi = 0, peak_tflops = 0, peak_tbps = 0;
    for (const Result* r : points) {
      const double x = r->flops / r->bytes;
      x_lo = x_lo == 0 ? x : std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      peak_tflops = std::max(peak_tflops, r->peak_tflops);
      peak_tbps = std::max(peak_tbps, r->peak_tbps);
    }
    for (const std::string& p : providers) {
      PlotSeries s;
      s.name = p;
      s.style = PlotStyle::points;
      s.color =
          static_cast<int>(std::find(providers.begin(), providers.end(), p) - providers.begin());
      for (const Result* r : points)
        if (r->provider == p) s.points.emplace_back(r->flops / r->bytes, r->tflops);
      std::sort(s.points.begin(), s.points.end());
      if (!s.points.empty()) plot.series.push_back(std::move(s));
    }
    std::string ceilings =
        points.front()->traits.device == DeviceKind::cpu
            ? "no measured ceilings (attnprof peaks --device cpu measures them)"
            : "no measured ceilings (a GPU run measures them when none are cached, as attnprof "
              "peaks does)";
    if (peak_tflops > 0 && peak_tbps > 0) {
      // The roof: bandwidth x intensity up to the ridge, the compute ceiling after it.
      const double ridge = peak_tflops / peak_tbps;
      const double lo = std::min(x_lo / 2, ridge / 2), hi = std::max(x_hi * 2, ridge * 2);
      PlotSeries roof;
      roof.name = fmt::format("measured ceilings: {} TFLOP/s, {} TB/s", format_sig3(peak_tflops),
                              format_sig3(peak_tbps));
      roof.style = PlotStyle::ceiling;
      roof.points = {{lo, peak_tbps * lo}, {ridge, peak_tflops}, {hi, peak_tflops}};
      plot.series.push_back(std::move(roof));
      ceilings = fmt::format("the measured ceilings ({} TFLOP/s, {} TB/s, ridge at {} FLOP/B)",
                             format_sig3(peak_tflops), format_sig3(peak_tbps), format_sig3(ridge));
    }
    group.figures.push_back(
        {fmt::format("fig{:02}-roofline", next_id++),
         fmt::format("Achieved TFLOP/s against arithmetic intensity per provider, {} {}, under {}",
                     key.first, to_string(key.second), ceilings),
         std::move(plot)});
  }
  return group;
}

}  // namespace attnprof
