// The numbers behind the findings: power-law fits of memory growth, the fastest provider per
// shape, and how providers are classified.
#include "report/findings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace attnprof {

std::optional<PowerFit> fit_power_law(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i] > 0 && y[i] > 0 && std::isfinite(x[i]) && std::isfinite(y[i])) {
      lx.push_back(std::log(x[i]));
      ly.push_back(std::log(y[i]));
    }
  }
  const auto n = static_cast<double>(lx.size());
  if (lx.size() < 2) return std::nullopt;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) {
    mx += lx[i] / n;
    my += ly[i] / n;
  }
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) {
    sxx += (lx[i] - mx) * (lx[i] - mx);
    sxy += (lx[i] - mx) * (ly[i] - my);
    syy += (ly[i] - my) * (ly[i] - my);
  }
  if (!(sxx > 1e-12)) return std::nullopt;  // one distinct x
  PowerFit fit;
  fit.exponent = sxy / sxx;
  fit.points = static_cast<int64_t>(lx.size());
  // Residual sum of squares of the fitted line: syy - slope * sxy.
  const double residual = std::max(0.0, syy - fit.exponent * sxy);
  fit.r2 = syy > 1e-300 ? 1 - residual / syy : 1;
  return fit;
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
      if (!m.no_extra) {
        m.fit = fit_power_law(x, y);
        if (m.fit && m.fit->points < 3) m.fit.reset();
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

bool within_noise(const Result& a, const Result& b) {
  const double lo = std::min(a.timing.median_us, b.timing.median_us);
  const double hi = std::max(a.timing.median_us, b.timing.median_us);
  const double tolerance = std::max(0.01, a.timing.cv + b.timing.cv);
  return lo > 0 && hi <= lo * (1 + tolerance);
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
