// Findings about what ran rather than how fast: the kernels a dispatcher chose, and the points
// that were not supported, broke, ran out of memory or stayed noisy.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "report/findings.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

std::string cut(const std::string& s, std::size_t n) {
  return truncate_to_width(one_line(s), n);
}

// Keys in order of first appearance with a count each.
struct Tally {
  std::vector<std::string> order;
  std::map<std::string, int64_t> count;
  void add(const std::string& key) {
    if (count[key]++ == 0) order.push_back(key);
  }
};

std::string plural(int64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

std::string main_kernel(const Result& r) {
  const KernelRecord* best = nullptr;
  for (const KernelRecord& k : r.kernels) {
    if (!best || k.total_us > best->total_us) best = &k;
  }
  return best ? best->name : "";
}

namespace {

// Providers that declare an unfused recipe (family naive or math) but ran a fused attention
// library's kernel: a compiler replaced the recipe (torch.compile's Inductor matches the pattern
// and calls SDPA). Said with where it did and did not, and the TFLOP/s of each.
void add_replaced_recipe_findings(const std::vector<Result>& results, std::vector<Finding>& out) {
  struct Seen {
    int64_t rows = 0, fused = 0;
    double fused_tflops = 0, other_tflops = 0;
    std::string kernel;
  };
  std::map<std::string, Seen> seen;
  std::vector<std::string> order;
  for (const Result& r : results) {
    const bool unfused = r.traits.family == Family::naive || r.traits.family == Family::math;
    if (!unfused || r.status != Status::passed) continue;
    const std::string kernel = main_kernel(r);
    if (kernel.empty()) continue;
    Seen& s = seen[r.provider];
    if (s.rows++ == 0) order.push_back(r.provider);
    if (sdpa_backend_of_kernel(kernel) == "math") {
      s.other_tflops = std::max(s.other_tflops, r.tflops);
      continue;
    }
    ++s.fused;
    s.fused_tflops = std::max(s.fused_tflops, r.tflops);
    if (s.kernel.empty()) s.kernel = kernel;
  }
  for (const std::string& p : order) {
    const Seen& s = seen[p];
    if (s.fused == 0) continue;
    std::string text = fmt::format(
        "{} declares an unfused recipe but ran a fused attention kernel at {} of {} ({}): "
        "what was compiled replaced the recipe there (up to {} TFLOP/s",
        code(p), s.fused, plural(s.rows, "shape"), code(cut(s.kernel, 90)),
        fmt::format("{:.3g}", s.fused_tflops));
    text += s.fused < s.rows ? fmt::format(", against up to {:.3g} where it ran unfused kernels).",
                                           s.other_tflops)
                             : ").";
    out.push_back({"kernel", text});
  }
}

}  // namespace

void add_kernel_findings(const std::vector<Result>& results, std::vector<Finding>& out) {
  add_replaced_recipe_findings(results, out);
  // The first dispatching provider of the rows (torch.sdpa.default): which kernels it really ran.
  std::string dispatcher;
  for (const Result& r : results) {
    if (r.traits.family == Family::dispatcher) {
      dispatcher = r.provider;
      break;
    }
  }
  if (dispatcher.empty()) return;
  const char* kDispatcher = dispatcher.c_str();
  Tally backends;
  std::map<std::string, std::string> example;  // backend -> its main kernel
  int64_t rows = 0;
  std::string note;
  for (const Result& r : results) {
    if (r.provider != kDispatcher || r.status != Status::passed) continue;
    ++rows;
    const std::string kernel = main_kernel(r);
    if (kernel.empty()) {
      if (note.empty()) note = r.kernels_note;
      continue;
    }
    const std::string backend = sdpa_backend_of_kernel(kernel);
    backends.add(backend);
    example.try_emplace(backend, kernel);
  }
  if (rows == 0) return;
  if (backends.order.empty()) {
    out.push_back({"kernel", fmt::format("Which kernel {} ran is unknown: no kernels were recorded "
                                         "({}).",
                                         code(kDispatcher), note.empty() ? "no note" : note)});
    return;
  }
  std::string text = fmt::format("{} dispatched to ", code(kDispatcher));
  for (std::size_t i = 0; i < backends.order.size(); ++i) {
    const std::string& b = backends.order[i];
    text += fmt::format("{}the {} backend at {} of {} shapes ({})", i == 0 ? "" : "; ", b,
                        backends.count[b], rows, code(cut(example[b], 90)));
  }
  out.push_back({"kernel", text + "."});
}

namespace {

// A reason with its numbers blanked: the same refusal at other sizes ("Query.sizes(): [1, 12,
// 64, 64]") is one reason.
std::string without_numbers(const std::string& reason) {
  std::string out;
  for (char c : reason) {
    const bool digit = c >= '0' && c <= '9';
    if (!digit) {
      out += c;
    } else if (out.empty() || out.back() != '#') {
      out += '#';
    }
  }
  return out;
}

// Not supported: reasons grouped per provider (numbers aside), each shown by its first example.
void unsupported(const std::vector<Result>& results, std::vector<Finding>& out) {
  std::vector<std::string> providers;
  std::map<std::string, Tally> reasons;
  std::map<std::string, std::string> example;  // grouping key -> first reason text
  for (const Result& r : results) {
    if (r.status != Status::not_supported) continue;
    if (!reasons.contains(r.provider)) providers.push_back(r.provider);
    const std::string text = one_line(r.reason);
    const std::string key = r.provider + "\n" + without_numbers(text);
    example.try_emplace(key, text);
    reasons[r.provider].add(key);
  }
  for (const std::string& p : providers) {
    const Tally& t = reasons[p];
    int64_t total = 0;
    for (const auto& [reason, n] : t.count) total += n;
    std::string text = fmt::format("{} was not supported at {}: ", code(p), plural(total, "point"));
    constexpr std::size_t kShown = 3;
    for (std::size_t i = 0; i < t.order.size() && i < kShown; ++i) {
      text += fmt::format("{}{} ({})", i ? "; " : "", cut(example.at(t.order[i]), 140),
                          t.count.at(t.order[i]));
    }
    if (t.order.size() > kShown) {
      text += fmt::format("; and {} other reasons", t.order.size() - kShown);
    }
    out.push_back({"unsupported", text + "."});
  }
}

// Out of memory, and the larger points skipped after it.
void out_of_memory(const std::vector<Result>& results, std::vector<Finding>& out) {
  Tally oom, skipped;
  std::map<std::string, const Result*> smallest_oom;
  for (const Result& r : results) {
    if (r.status == Status::oom) {
      oom.add(r.provider);
      auto& s = smallest_oom[r.provider];
      if (!s || r.memory.analytic_bytes < s->memory.analytic_bytes) s = &r;
    } else if (r.status == Status::skipped) {
      skipped.add(r.provider);
    }
  }
  for (const std::string& p : oom.order) {
    out.push_back({"oom", fmt::format("{} ran out of memory at {} (the smallest: {}){}.", code(p),
                                      plural(oom.count[p], "point"), smallest_oom[p]->spec.label(),
                                      skipped.count.contains(p)
                                          ? fmt::format("; {} skipped after it",
                                                        plural(skipped.count[p], "larger point"))
                                          : "")});
  }
}

// Broken rows: incorrect, failed, timed out.
void broken_rows(const std::vector<Result>& results, std::vector<Finding>& out) {
  std::vector<const Result*> broken;
  Tally statuses;
  for (const Result& r : results) {
    if (r.status == Status::incorrect || r.status == Status::failed ||
        r.status == Status::timeout) {
      broken.push_back(&r);
      statuses.add(std::string(to_string(r.status)));
    }
  }
  if (!broken.empty()) {
    std::string counts;
    for (const std::string& s : statuses.order) {
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", statuses.count[s], s);
    }
    std::string text =
        fmt::format("{} did not pass ({}): ", plural(int64_t(broken.size()), "point"), counts);
    constexpr std::size_t kShown = 5;
    for (std::size_t i = 0; i < broken.size() && i < kShown; ++i) {
      const Result& r = *broken[i];
      text += fmt::format("{}{} {} {}: {}", i ? "; " : "", code(r.provider), r.spec.label(),
                          to_string(r.status), cut(r.reason, 120));
    }
    if (broken.size() > kShown) text += fmt::format("; and {} more", broken.size() - kShown);
    out.push_back({"failures", text + "."});
  }
}

void noisy_rows(const std::vector<Result>& results, std::vector<Finding>& out) {
  // Why each noisy row is noisy, as its stop reason says: a busy host (the samples converged,
  // on a machine others were using), too few samples, or the median's noise above the bound.
  int64_t timed = 0, noisy = 0, busy = 0, few = 0;
  double busiest = 0;
  for (const Result& r : results) {
    if (r.status != Status::passed || r.timing.samples == 0) continue;
    ++timed;
    if (!r.timing.noisy) continue;
    ++noisy;
    if (r.timing.stop_reason.find("host busy") != std::string::npos) {
      ++busy;
      busiest = std::max(busiest, r.timing.host_busy);
    } else if (r.timing.stop_reason.find("--min-samples") != std::string::npos) {
      ++few;
    }
  }
  if (noisy == 0) return;
  std::vector<std::string> why;
  if (busy > 0) {
    why.push_back(
        fmt::format("{} sampled while other processes used up to {:.0f}% of the "
                    "host's CPU time (their medians converged, on a busy machine)",
                    busy, 100 * busiest));
  }
  if (few > 0) {
    why.push_back(
        fmt::format("{} stopped at the time limit with fewer samples than "
                    "--min-samples asks for",
                    few));
  }
  if (const int64_t rest = noisy - busy - few; rest > 0) {
    why.push_back(
        fmt::format("{} stopped at the limit with the median's noise above the bound", rest));
  }
  out.push_back({"noise", fmt::format("{} of {} timed rows are noisy: {}.", noisy, timed,
                                      fmt::join(why, "; "))});
}

}  // namespace

void add_status_findings(const std::vector<Result>& results, std::vector<Finding>& out) {
  unsupported(results, out);
  out_of_memory(results, out);
  broken_rows(results, out);
  noisy_rows(results, out);
}

}  // namespace attnprof
