// Chrome trace event format (the JSON chrome://tracing and ui.perfetto.dev open): one process
// per provider, one thread per CUDA stream plus one for the phases, complete ("X") events with
// microsecond ts/dur, and "M" metadata naming and ordering the tracks.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "attnprof/trace.hpp"

namespace attnprof {

namespace {

using nlohmann::json;

// The phases track's tid: 0, unless a stream has CUPTI id 0, then one past the largest id.
int64_t phases_tid(const std::set<uint32_t>& streams) {
  if (!streams.count(0)) return 0;
  return int64_t{*streams.rbegin()} + 1;
}

json metadata(const char* name, int64_t pid, std::optional<int64_t> tid, json args) {
  json m = {{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", std::move(args)}};
  if (tid) m["tid"] = *tid;
  return m;
}

// Nanoseconds after `origin` as microseconds (the format's unit), exact to the nanosecond.
double us_since(uint64_t ns, uint64_t origin) {
  return ns > origin ? double(ns - origin) * 1e-3 : 0.0;
}

json complete_event(const TraceEvent& e, int64_t pid, int64_t tid, uint64_t origin) {
  json args = {{"kind", std::string(to_string(e.kind))}};
  if (e.kind != TraceKind::range) {
    args["category"] = std::string(to_string(e.category));
    args["stream"] = e.stream;
  }
  if (e.grid) args["grid"] = {e.grid->x, e.grid->y, e.grid->z};
  if (e.block) args["block"] = {e.block->x, e.block->y, e.block->z};
  if (e.bytes > 0) args["bytes"] = e.bytes;
  return {{"ph", "X"},
          {"name", e.name},
          {"cat",
           e.kind == TraceKind::range ? std::string("phase") : std::string(to_string(e.category))},
          {"pid", pid},
          {"tid", tid},
          {"ts", us_since(e.start_ns, origin)},
          {"dur", e.duration_us()},
          {"args", std::move(args)}};
}

void add_provider(json& events, const Result& row, int64_t pid) {
  const PointTrace& t = trace_of(row);
  uint64_t origin = UINT64_MAX;
  for (const auto* list : {&t.ranges, &t.device_events}) {
    for (const TraceEvent& e : *list) origin = std::min(origin, e.start_ns);
  }
  if (origin == UINT64_MAX) origin = 0;
  std::set<uint32_t> streams;
  for (const TraceEvent& e : t.device_events) streams.insert(e.stream);
  const int64_t phases = phases_tid(streams);

  std::string process = fmt::format("{} · {} · {}", row.provider, row.spec.label(), row.device);
  if (row.status != Status::passed)
    process += fmt::format(" · {}: {}", to_string(row.status), row.reason);
  events.push_back(metadata("process_name", pid, std::nullopt, {{"name", process}}));
  events.push_back(metadata("process_sort_index", pid, std::nullopt, {{"sort_index", pid}}));
  events.push_back(metadata("thread_name", pid, phases, {{"name", "phases (host)"}}));
  events.push_back(metadata("thread_sort_index", pid, phases, {{"sort_index", 0}}));
  int64_t order = 1;
  for (uint32_t s : streams) {
    const std::string name = s == t.timed_stream && t.timed_stream != 0
                                 ? fmt::format("stream {} (timed)", s)
                                 : fmt::format("stream {}", s);
    events.push_back(metadata("thread_name", pid, s, {{"name", name}}));
    events.push_back(metadata("thread_sort_index", pid, s, {{"sort_index", order++}}));
  }
  for (const TraceEvent& r : t.ranges) events.push_back(complete_event(r, pid, phases, origin));
  for (const TraceEvent& e : t.device_events)
    events.push_back(complete_event(e, pid, e.stream, origin));
}

}  // namespace

std::string chrome_trace_json(const std::vector<Result>& traces) {
  json events = json::array();
  for (size_t i = 0; i < traces.size(); ++i) {
    add_provider(events, traces[i], static_cast<int64_t>(i) + 1);
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"tool", "attnprof trace"},
                {"clock",
                 "CUPTI timestamps (CUDA) or the host steady clock (CPU); each process "
                 "starts at its own first event"}}}};
  return doc.dump(1) + "\n";
}

}  // namespace attnprof
