// Joining two runs and judging each pair of rows against the runs' noise.
#include "attnprof/compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "attnprof/env.hpp"
#include "attnprof/provider_settings.hpp"

namespace attnprof {

namespace {

// The rows of one run at one (provider, spec): passed rows by timing mode, the last other row.
struct Side {
  std::map<std::string, const Result*> passed;
  const Result* other = nullptr;
};
using Joined = std::map<std::string, Side>;  // by provider|spec key

// A provider under other settings is another point (provider_settings.hpp).
std::string point_key(const Result& r) {
  return r.provider + "|" + r.spec.key() + "|" + settings_key(r.env);
}

std::string point_label(const Result& r) {
  const std::string settings = settings_key(r.env);
  return r.provider + " " + r.spec.label() + (settings.empty() ? "" : " (" + settings + ")");
}

// The rows of a run by point; the last row of a (point, mode) wins and the rest are counted.
Joined index_rows(const std::vector<Result>& rows, std::vector<std::string>& order,
                  int64_t& duplicates) {
  Joined out;
  for (const Result& r : rows) {
    auto [it, fresh] = out.try_emplace(point_key(r));
    if (fresh) order.push_back(it->first);
    Side& side = it->second;
    if (r.status == Status::passed && r.timing.samples > 0) {
      auto [slot, inserted] = side.passed.try_emplace(r.timing.mode, &r);
      if (!inserted) {
        slot->second = &r;
        ++duplicates;
      }
    } else {
      if (side.other) ++duplicates;
      side.other = &r;
    }
  }
  return out;
}

bool broken(Status s) {
  return s == Status::incorrect || s == Status::failed || s == Status::timeout || s == Status::oom;
}

// The status a side shows for a point: passed when any mode passed, else its other row's.
std::string side_status(const Side* side) {
  if (!side) return "absent";
  if (!side->passed.empty()) return "passed";
  return side->other ? std::string(to_string(side->other->status)) : "absent";
}

// Fingerprint entries that differ between the first environments of the two runs.
std::vector<std::string> env_differences(const std::vector<Result>& base,
                                         const std::vector<Result>& head) {
  const auto first_env = [](const std::vector<Result>& rows) -> const Fingerprint* {
    for (const Result& r : rows) {
      if (!r.env.empty()) return &r.env;
    }
    return nullptr;
  };
  const Fingerprint* a = first_env(base);
  const Fingerprint* b = first_env(head);
  std::vector<std::string> out;
  if (!a || !b) return out;
  for (const char* key : {"device", "git_commit", "build_type", "driver", "cuda_runtime", "cublas",
                          "cudnn", "torch", "power_limit", "ecc"}) {
    const auto ia = a->find(key);
    const auto ib = b->find(key);
    const std::string va = ia == a->end() ? "" : ia->second;
    const std::string vb = ib == b->end() ? "" : ib->second;
    if (va != vb && !va.empty() && !vb.empty())
      out.push_back(fmt::format("{}: {} -> {}", key, va, vb));
  }
  return out;
}

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "FASTER";
    case Verdict::slower:
      return "SLOWER";
    case Verdict::same:
      return "SAME";
    case Verdict::ambiguous:
      return "AMBIGUOUS";
  }
  return "?";
}

double median_noise(const TimingResult& t) {
  if (t.samples < 2) return std::numeric_limits<double>::infinity();
  if (t.rel_noise > 0) return t.rel_noise;
  return 1.2533 * t.cv / std::sqrt(static_cast<double>(t.samples));
}

Verdict judge(double ratio, double noise_base, double noise_new, const CompareOptions& o) {
  if (!(ratio > 0) || !std::isfinite(ratio)) return Verdict::ambiguous;
  const double band = o.z * std::hypot(noise_base, noise_new);
  if (!std::isfinite(band)) return Verdict::ambiguous;
  // Noise on the log scale (relative errors add there); the threshold on the change as printed.
  const double change = std::fabs(std::log(ratio));
  const double relative = std::fabs(ratio - 1);
  if (change > band && relative >= o.threshold) {
    return ratio < 1 ? Verdict::faster : Verdict::slower;
  }
  if (relative < o.threshold && band < std::log1p(o.threshold)) return Verdict::same;
  return Verdict::ambiguous;
}

int64_t Comparison::count(Verdict v) const {
  int64_t n = 0;
  for (const ComparedRow& r : rows) n += r.verdict == v ? 1 : 0;
  return n;
}

double Comparison::geomean_ratio() const {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const ComparedRow& r : rows) sum += std::log(r.ratio);
  return std::exp(sum / static_cast<double>(rows.size()));
}

int64_t Comparison::broken() const {
  int64_t n = 0;
  for (const StatusChange& c : changes) n += c.regression ? 1 : 0;
  return n;
}

bool Comparison::has_regression(bool allow_missing) const {
  return count(Verdict::slower) > 0 || broken() > 0 || (!allow_missing && !missing.empty());
}

Comparison compare_runs(const std::vector<Result>& base, const std::vector<Result>& head,
                        const CompareOptions& options) {
  Comparison out;
  std::vector<std::string> base_order, head_order;
  const Joined a = index_rows(base, base_order, out.duplicates);
  const Joined b = index_rows(head, head_order, out.duplicates);
  out.env_differences = env_differences(base, head);

  for (const std::string& key : base_order) {
    const Side& sa = a.at(key);
    const auto ib = b.find(key);
    const Side* sb = ib == b.end() ? nullptr : &ib->second;
    const Result& any_a = sa.passed.empty() ? *sa.other : *sa.passed.begin()->second;
    if (!sb) {
      // A point that passed in A is listed once, as missing from B; only_base holds the rest.
      if (sa.passed.empty()) {
        out.only_base.push_back(point_label(any_a));
      } else {
        out.missing.push_back(point_label(any_a) + ": absent");
      }
      continue;
    }
    bool compared = false;
    for (const auto& [mode, ra] : sa.passed) {
      const auto rb = sb->passed.find(mode);
      if (rb == sb->passed.end()) continue;
      ComparedRow row{*ra, *rb->second};
      row.ratio = rb->second->timing.median_us / ra->timing.median_us;
      const double na = median_noise(ra->timing);
      const double nb = median_noise(rb->second->timing);
      row.band = options.z * std::hypot(na, nb);
      row.verdict = judge(row.ratio, na, nb, options);
      if (ra->timing.clock_mhz > 0 && rb->second->timing.clock_mhz > 0) {
        row.clock_ratio = rb->second->timing.clock_mhz / ra->timing.clock_mhz;
      }
      out.rows.push_back(std::move(row));
      compared = true;
    }
    const std::string status_a = side_status(&sa);
    const std::string status_b = side_status(sb);
    if (!compared && status_a == "passed" && status_b == "passed") {
      out.mode_mismatches.push_back(fmt::format("{} (timed {} vs {})", point_label(any_a),
                                                sa.passed.begin()->first,
                                                sb->passed.begin()->first));
    } else if (status_a != status_b) {
      StatusChange c{any_a.provider, any_a.spec, status_a, status_b, "", false};
      const Result* failing = status_b != "passed" ? sb->other : sa.other;
      if (failing) c.reason = failing->reason;
      c.regression = status_a == "passed" && sb->other && broken(sb->other->status);
      if (status_a == "passed" && !c.regression) {
        out.missing.push_back(point_label(any_a) + ": " + status_b);
      }
      out.changes.push_back(std::move(c));
    }
  }
  for (const std::string& key : head_order) {
    if (a.contains(key)) continue;
    const Side& sb = b.at(key);
    out.only_head.push_back(
        point_label(sb.passed.empty() ? *sb.other : *sb.passed.begin()->second));
  }
  return out;
}

}  // namespace attnprof
