// The numbers behind the findings: fits of memory growth (a constant plus a power), the fastest
// provider per shape, and how providers are classified.
#include "report/findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "report/units.hpp"

namespace attnprof {

namespace {

// For one exponent: base and a minimizing sum ((y - base - a t) / y)^2 with t = (x / x_max)^p,
// both kept >= 0. Returns the residual.
struct Linear {
  double base = 0, a = 0, residual = 0;
};
Linear fit_at(const std::vector<double>& x, const std::vector<double>& y, double x_max, double p) {
  double sw = 0, swt = 0, swtt = 0, swy = 0, swty = 0;
  std::vector<double> t(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    t[i] = std::pow(x[i] / x_max, p);
    const double w = 1 / (y[i] * y[i]);
    sw += w;
    swt += w * t[i];
    swtt += w * t[i] * t[i];
    swy += w * y[i];
    swty += w * t[i] * y[i];
  }
  Linear l;
  const double det = sw * swtt - swt * swt;
  if (det > 0) {
    l.base = (swtt * swy - swt * swty) / det;
    l.a = (sw * swty - swt * swy) / det;
  }
  if (!(det > 0) || l.base < 0) {  // a pure power
    l.base = 0;
    l.a = swty / swtt;
  }
  if (l.a < 0) {  // nothing grows
    l.a = 0;
    l.base = swy / sw;
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = (y[i] - l.base - l.a * t[i]) / y[i];
    l.residual += r * r;
  }
  return l;
}

}  // namespace

std::optional<GrowthFit> fit_growth(const std::vector<double>& x_in,
                                    const std::vector<double>& y_in) {
  std::vector<double> x, y;
  for (std::size_t i = 0; i < x_in.size() && i < y_in.size(); ++i) {
    if (x_in[i] > 0 && y_in[i] > 0 && std::isfinite(x_in[i]) && std::isfinite(y_in[i])) {
      x.push_back(x_in[i]);
      y.push_back(y_in[i]);
    }
  }
  std::vector<double> distinct = x;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() < 3) return std::nullopt;
  GrowthFit f;
  f.points = static_cast<int64_t>(x.size());
  const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
  if (*hi - *lo < 0.05 * *hi) {
    std::vector<double> sorted = y;
    std::sort(sorted.begin(), sorted.end());
    f.constant = true;
    f.base = sorted[sorted.size() / 2];
    f.r2 = 1;
    return f;
  }
  const double x_max = distinct.back();
  double best_p = 0.1;
  Linear best = fit_at(x, y, x_max, best_p);
  for (int k = 11; k <= 300; ++k) {  // exponents 0.11 .. 3.00
    const double p = k / 100.0;
    const Linear l = fit_at(x, y, x_max, p);
    if (l.residual < best.residual) {
      best = l;
      best_p = p;
    }
  }
  // Refine around the best hundredth.
  for (double step = 0.005; step > 1e-4; step /= 2) {
    for (double p : {best_p - step, best_p + step}) {
      if (p < 0.1 || p > 3) continue;
      const Linear l = fit_at(x, y, x_max, p);
      if (l.residual < best.residual) {
        best = l;
        best_p = p;
      }
    }
  }
  if (best.a <= 0) {  // the fit found nothing that grows: the data are flat within noise
    f.constant = true;
    f.base = best.base;
    f.r2 = 1;
    return f;
  }
  f.base = best.base;
  f.exponent = best_p;
  double mean = 0;
  for (double v : y) mean += std::log(v) / double(y.size());
  double ss_tot = 0, ss_res = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double fit = best.base + best.a * std::pow(x[i] / x_max, best_p);
    const double ly = std::log(y[i]);
    ss_tot += (ly - mean) * (ly - mean);
    ss_res += fit > 0 ? (ly - std::log(fit)) * (ly - std::log(fit)) : ly * ly;
  }
  f.r2 = ss_tot > 1e-300 ? 1 - ss_res / ss_tot : 1;
  return f;
}

std::string describe_growth(const GrowthFit& f, double y_min) {
  if (f.constant) return "constant at " + format_bytes(f.base);
  if (f.r2 < kClearGrowthFit) return "no clear power of N";
  std::string s = format_power(f.exponent);
  if (f.base >= 0.05 * y_min) s += " above a constant " + format_bytes(f.base);
  return s;
}

std::vector<MemoryGrowth> memory_growth(const std::vector<SeriesGroup>& groups) {
  std::vector<MemoryGrowth> out;
  for (const SeriesGroup& g : groups) {
    if (!g.fixed_batch) continue;  // at a fixed token count the batch shrinks as N grows
    for (const std::string& provider : g.providers) {
      // One row per N (the first), in order of N.
      std::vector<const Result*> rows;
      for (const Result* r : g.rows.at(provider)) {
        if (rows.empty() || row_n(*rows.back()) != row_n(*r)) rows.push_back(r);
      }
      if (rows.size() < 3) continue;
      MemoryGrowth m;
      m.provider = provider;
      m.series = g.title;
      m.n_min = row_n(*rows.front());
      m.n_max = row_n(*rows.back());
      m.points = static_cast<int64_t>(rows.size());
      std::vector<double> x, y;
      for (const Result* r : rows) {
        x.push_back(static_cast<double>(row_n(*r)));
        y.push_back(static_cast<double>(r->memory.extra_bytes));
      }
      m.no_extra = std::all_of(y.begin(), y.end(), [](double v) { return v <= 0; });
      for (double v : y)
        if (v > 0 && (m.y_min == 0 || v < m.y_min)) m.y_min = v;
      m.y_first = y.front();
      m.y_last = y.back();
      if (!m.no_extra) m.fit = fit_growth(x, y);
      out.push_back(std::move(m));
    }
  }
  return out;
}

double noise_tolerance(const Result& a, const Result& b) {
  return std::max(0.01, a.timing.cv + b.timing.cv);
}

bool within_noise(const Result& a, const Result& b) {
  const double lo = std::min(a.timing.median_us, b.timing.median_us);
  const double hi = std::max(a.timing.median_us, b.timing.median_us);
  return lo > 0 && hi <= lo * (1 + noise_tolerance(a, b));
}

Spread spread(const std::vector<double>& ratios) {
  Spread s;
  if (ratios.empty()) return s;
  double sum = 0;
  for (double r : ratios) sum += std::log(r);
  s.n = ratios.size();
  s.geomean = std::exp(sum / static_cast<double>(s.n));
  s.lo = *std::min_element(ratios.begin(), ratios.end());
  s.hi = *std::max_element(ratios.begin(), ratios.end());
  return s;
}

bool spans(const Spread& s) {
  return format_sig3(s.lo) != format_sig3(s.hi);
}

std::string range_of(const Spread& s) {
  return spans(s) ? fmt::format("{}–{}", format_sig3(s.lo), format_times(s.hi))
                  : format_times(s.geomean);
}

std::vector<Fastest> fastest_per_shape(const std::vector<Result>& results,
                                       const std::string& baseline) {
  std::vector<Fastest> out;
  for (auto& [key, rows] : rows_by_shape(results)) {
    Fastest f;
    std::stable_sort(rows.begin(), rows.end(), [](const Result* a, const Result* b) {
      return a->timing.median_us < b->timing.median_us;
    });
    f.best = rows.front();
    for (const Result* r : rows) {
      if (!f.runner_up && r->provider != f.best->provider) f.runner_up = r;
      if (!f.baseline && r->provider == baseline) f.baseline = r;
      if (r->provider != f.best->provider && within_noise(*f.best, *r)) f.tied.push_back(r);
    }
    out.push_back(f);
  }
  return out;
}

std::string sdpa_backend_of_kernel(const std::string& kernel_name) {
  std::string k = kernel_name;
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto has = [&](const char* s) { return k.find(s) != std::string::npos; };
  if (has("cudnn")) return "cudnn";
  if (has("flash")) return "flash";
  if (has("fmha_cutlass") || has("efficient") || has("mem_eff") || has("attentionkernel")) {
    return "efficient";
  }
  return "math";
}

const ProviderTraits* traits_in(const std::vector<Result>& results, const std::string& provider) {
  for (const Result& r : results) {
    if (r.provider == provider) return &r.traits;
  }
  return nullptr;
}

}  // namespace attnprof
