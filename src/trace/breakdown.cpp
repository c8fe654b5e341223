// The kernel breakdown of a traced point: device time by category over the timed range, the
// kernels by name, and the flags (docs/tracing.md, "Flags").
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "attnprof/trace.hpp"

namespace attnprof {

namespace {

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

std::vector<KernelRow> by_name(const std::vector<TraceEvent>& events) {
  std::vector<KernelRow> rows;
  std::map<std::string, size_t> index;
  for (const TraceEvent& e : events) {
    auto [it, fresh] = index.try_emplace(e.name, rows.size());
    if (fresh) rows.push_back(KernelRow{e.name, e.category, e.kind, 0, 0.0});
    rows[it->second].count += 1;
    rows[it->second].total_us += e.duration_us();
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const KernelRow& a, const KernelRow& b) { return a.total_us > b.total_us; });
  return rows;
}

void add_flags(Breakdown& b, const Result& row, const std::vector<TraceEvent>& events) {
  const PointTrace& t = trace_of(row);
  const CategoryRow& copies = b.row(KernelCategory::elementwise_copy);
  if (b.fused_path && copies.share > kFusedCopyShareLimit) {
    std::set<std::string> names;
    for (const KernelRow& k : b.kernels) {
      if (k.category == KernelCategory::elementwise_copy) names.insert(k.name);
    }
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : "; ") + n;
    b.flags.push_back(fmt::format(
        "fused path spends {:.1f}% of kernel time in elementwise/cast/copy work (over {:.0f}%): "
        "{} event(s): {}",
        100.0 * copies.share, 100.0 * kFusedCopyShareLimit, copies.count, list));
  }
  if (row.traits.fused && b.row(KernelCategory::fused_attention).count == 0 && b.total_us > 0) {
    b.flags.push_back(fmt::format(
        "{} is a fused provider but no fused-attention kernel ran in the timed launches",
        row.provider));
  }
  int64_t host_copies = 0;
  for (const TraceEvent& e : events) {
    if (e.kind == TraceKind::memcpy && (contains(e.name, "HtoD") || contains(e.name, "DtoH")))
      ++host_copies;
  }
  if (host_copies > 0) {
    b.flags.push_back(fmt::format(
        "{} host<->device copies inside the timed launches (a launch should stay on the device)",
        host_copies));
  }
  int64_t elsewhere = 0;
  for (const TraceEvent& e : events) {
    if (e.kind == TraceKind::kernel && t.timed_stream != 0 && e.stream != t.timed_stream)
      ++elsewhere;
  }
  if (elsewhere > 0) {
    b.flags.push_back(fmt::format(
        "{} kernel(s) ran outside the timed stream {} (the engine's events would not time them)",
        elsewhere, t.timed_stream));
  }
}

}  // namespace

const CategoryRow& Breakdown::row(KernelCategory c) const {
  for (const CategoryRow& r : categories) {
    if (r.category == c) return r;
  }
  static const CategoryRow kEmpty{};
  return kEmpty;
}

std::vector<TraceEvent> events_in_phase(const Result& row, std::string_view phase) {
  const PointTrace& t = trace_of(row);
  auto range = std::find_if(t.ranges.begin(), t.ranges.end(),
                            [&](const TraceEvent& r) { return r.name == phase; });
  if (range == t.ranges.end()) return t.device_events;
  std::vector<TraceEvent> out;
  for (const TraceEvent& e : t.device_events) {
    if (e.start_ns >= range->start_ns && e.start_ns < range->end_ns) out.push_back(e);
  }
  return out;
}

Breakdown make_breakdown(const Result& row) {
  const PointTrace& t = trace_of(row);
  Breakdown b;
  b.launches = t.timed_launches;
  const std::vector<TraceEvent> events = events_in_phase(row, kPhaseTimed);
  for (KernelCategory c : kKernelCategories) b.categories.push_back(CategoryRow{c, 0, 0.0, 0.0});
  for (const TraceEvent& e : events) {
    CategoryRow& r = b.categories[static_cast<size_t>(e.category)];
    r.count += 1;
    r.total_us += e.duration_us();
    b.total_us += e.duration_us();
  }
  for (CategoryRow& r : b.categories) r.share = b.total_us > 0 ? r.total_us / b.total_us : 0.0;
  b.kernels = by_name(events);
  b.fused_path = row.traits.fused || b.row(KernelCategory::fused_attention).count > 0;
  add_flags(b, row, events);
  return b;
}

}  // namespace attnprof
