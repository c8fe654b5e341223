// The row codec (include/attnprof/result_json.hpp). docs/results.md is the schema.
//
// Conventions (the reader accepts exactly what the writer produces, so the round trip is exact):
// - Finite doubles are JSON numbers in the shortest form that reads back to the same bits.
// - Non-finite doubles are the strings "nan", "inf" and "-inf": JSON has no such numbers, and
//   null is taken by absent optional fields (pct_peak_flops, pct_peak_bw). NaN's sign is lost.
// - Every field of the current schema is required; unknown fields are ignored. schema_version is
//   checked first, so a row of another version is refused with that reason rather than a missing
//   field. Rows of schema 1 (before faults, traits, clock policy and host load) and of schema 2
//   (before the verification's time, launches and reference cross-check) are read with those
//   fields at their defaults.
#include "attnprof/result_json.hpp"

#include "attnprof/axes.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace attnprof {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // writes fields in schema order

// ---- writing ----------------------------------------------------------------------------

OrderedJson number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

OrderedJson optional_number(const std::optional<double>& x) {
  return x ? number(*x) : OrderedJson(nullptr);
}

// The spec's fields as the axis table declares them (axes.hpp), in its order; a field marked
// json_when_set only where the spec differs from Spec{}'s (docs/results.md).
OrderedJson spec_json(const Spec& s) {
  static const Spec plain{};
  OrderedJson j = OrderedJson::object();
  for (const Axis& axis : axes()) {
    if (axis.json.empty()) continue;
    const std::string v = axis.get(s);
    if (axis.json_when_set && v == axis.get(plain)) continue;
    const std::string key(axis.json);
    switch (axis.kind) {
      case AxisKind::integer:
        j[key] = std::stoll(v);
        break;
      case AxisKind::number:
        j[key] = number(std::stod(v));
        break;
      case AxisKind::boolean:
        j[key] = v == "on";
        break;
      case AxisKind::text:
        j[key] = v;
        break;
    }
  }
  return j;
}

OrderedJson timing_json(const TimingResult& t) {
  return {{"mode", t.mode},
          {"median_us", number(t.median_us)},
          {"mean_us", number(t.mean_us)},
          {"min_us", number(t.min_us)},
          {"p5_us", number(t.p5_us)},
          {"p95_us", number(t.p95_us)},
          {"cv", number(t.cv)},
          {"rel_noise", number(t.rel_noise)},
          {"samples", t.samples},
          {"launches_per_sample", t.launches_per_sample},
          {"noisy", t.noisy},
          {"stop_reason", t.stop_reason},
          {"dropped_throttled", t.dropped_throttled},
          {"clock_settling", t.clock_settling},
          {"clock_mhz", number(t.clock_mhz)},
          {"clock_policy", t.clock_policy},
          {"power_w", number(t.power_w)},
          {"copies", t.copies},
          {"host_load", number(t.host_load)},
          {"host_busy", number(t.host_busy)}};
}

OrderedJson traits_json(const ProviderTraits& t) {
  OrderedJson j = {{"name", t.name},
                   {"description", t.description},
                   {"device", to_string(t.device)},
                   {"family", to_string(t.family)},
                   {"fused", t.fused},
                   {"library", t.library},
                   {"library_version", t.library_version},
                   {"in_default_set", t.in_default_set},
                   {"role", to_string(t.role)},
                   {"variant_of", t.variant_of},
                   {"forward", t.forward},
                   {"backward", t.backward},
                   {"writes_lse", t.writes_lse}};
  if (t.paged_kv) j["paged_kv"] = true;        // only where it reads a paged cache
  if (t.fp8) j["fp8"] = true;                  // only where it takes fp8 inputs
  if (t.softcap) j["softcap"] = true;          // only where it caps logits
  if (t.sinks) j["sinks"] = true;              // only where it takes sink logits
  if (t.ragged) j["ragged"] = true;            // only where it takes ragged batches
  if (t.own_streams) j["own_streams"] = true;  // only where it orders streams of its own
  // Only a quantized provider's rows carry these (docs/results.md).
  if (!t.quantization.empty() || t.output_tolerance > 0) {
    j["quantization"] = t.quantization;
    j["output_tolerance"] = number(t.output_tolerance);
  }
  // Only where its first prepare compiles for long (a JIT).
  if (t.prepare_allowance_s > 0) j["prepare_allowance_s"] = number(t.prepare_allowance_s);
  return j;
}

OrderedJson dim3_json(const std::optional<Dim3>& d) {
  if (!d) return nullptr;
  return OrderedJson::array({d->x, d->y, d->z});
}

OrderedJson events_json(const std::vector<TraceEvent>& events) {
  OrderedJson out = OrderedJson::array();
  for (const TraceEvent& e : events) {
    out.push_back({{"name", e.name},
                   {"category", to_string(e.category)},
                   {"kind", to_string(e.kind)},
                   {"stream", e.stream},
                   {"start_ns", e.start_ns},
                   {"end_ns", e.end_ns},
                   {"grid", dim3_json(e.grid)},
                   {"block", dim3_json(e.block)},
                   {"bytes", e.bytes}});
  }
  return out;
}

OrderedJson trace_json(const PointTrace& t) {
  return {{"ranges", events_json(t.ranges)},
          {"device_events", events_json(t.device_events)},
          {"timed_stream", t.timed_stream},
          {"timed_launches", t.timed_launches}};
}

OrderedJson memory_json(const MemoryResult& m) {
  return {{"peak_bytes", m.peak_bytes},
          {"extra_bytes", m.extra_bytes},
          {"analytic_bytes", m.analytic_bytes},
          {"workspace_bytes", m.workspace_bytes},
          {"process_hwm_bytes", m.process_hwm_bytes}};
}

OrderedJson verify_json(const VerifyResult& v) {
  return {{"checked", v.checked},
          {"max_abs_err", number(v.max_abs_err)},
          {"rel_l2_err", number(v.rel_l2_err)},
          {"tolerance", number(v.tolerance)},
          {"lse_max_abs_err", number(v.lse_max_abs_err)},
          {"lse_tolerance", number(v.lse_tolerance)},
          {"rows_checked", v.rows_checked},
          {"rows_total", v.rows_total},
          {"nan_count", v.nan_count},
          {"sampling", v.sampling},
          {"detail", v.detail},
          {"seconds", number(v.seconds)},
          {"launches_checked", v.launches_checked},
          {"reference_disagreement", number(v.reference_disagreement)}};
}

OrderedJson kernels_json(const std::vector<KernelRecord>& kernels) {
  OrderedJson out = OrderedJson::array();
  for (const KernelRecord& k : kernels) {
    out.push_back({{"name", k.name}, {"count", k.count}, {"total_us", number(k.total_us)}});
  }
  return out;
}

// ---- reading ----------------------------------------------------------------------------

[[noreturn]] void malformed(const std::string& what) {
  throw std::runtime_error("malformed journal line: " + what);
}

// A JSON object being read, with its dotted path for messages ("timing", "memory", ...).
class Reader {
 public:
  Reader(const Json& object, std::string path, int version = kSchemaVersion)
      : object_(object), path_(std::move(path)), version_(version) {
    if (!object_.is_object()) {
      malformed(path_.empty() ? "expected a JSON object"
                              : fmt::format("field '{}' must be an object", path_));
    }
  }

  const Json& get(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) malformed(fmt::format("missing field '{}'", name(key)));
    return *it;
  }
  bool has(const char* key) const { return object_.contains(key); }
  Reader object(const char* key) const { return Reader(get(key), name(key), version_); }
  // The schema version of the row being read (fields added later are absent from older rows).
  int version() const { return version_; }

  std::string string(const char* key) const {
    const Json& v = get(key);
    if (!v.is_string()) wrong_type(key, "a string");
    return v.get<std::string>();
  }
  // A string field that rows written before it existed lack: "" when absent.
  std::string string_or_empty(const char* key) const {
    return object_.contains(key) ? string(key) : std::string();
  }
  bool boolean(const char* key) const {
    const Json& v = get(key);
    if (!v.is_boolean()) wrong_type(key, "true or false");
    return v.get<bool>();
  }
  int64_t integer(const char* key) const { return to_integer(get(key), name(key)); }
  double number(const char* key) const { return to_number(get(key), name(key)); }
  std::optional<double> optional_number(const char* key) const {
    const Json& v = get(key);
    if (v.is_null()) return std::nullopt;
    return to_number(v, name(key));
  }

  // Parses an enum field with one of the parse_* functions of spec.hpp / result.hpp.
  template <class Parse>
  auto choice(const char* key, Parse parse, std::string_view allowed) const {
    const std::string text = string(key);
    auto parsed = parse(text);
    if (!parsed) {
      malformed(fmt::format("field '{}': unknown value '{}' ({})", name(key), text, allowed));
    }
    return *parsed;
  }

  static int64_t to_integer(const Json& v, const std::string& name) {
    if (v.is_number_integer() &&
        !(v.is_number_unsigned() &&
          v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
      return v.get<int64_t>();
    }
    malformed(fmt::format("field '{}' must be an integer", name));
  }
  static double to_number(const Json& v, const std::string& name) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    malformed(fmt::format("field '{}' must be a number, \"nan\", \"inf\" or \"-inf\"", name));
  }

  std::string name(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  [[noreturn]] void wrong_type(const char* key, const char* expected) const {
    malformed(fmt::format("field '{}' must be {}", name(key), expected));
  }

  const Json& object_;
  std::string path_;
  int version_;
};

Spec read_spec(const Reader& in) {
  Spec s;
  for (const Axis& axis : axes()) {
    if (axis.json.empty()) continue;
    const std::string key(axis.json);
    if (axis.json_when_set && !in.has(key.c_str())) continue;
    std::string v;
    switch (axis.kind) {
      case AxisKind::integer:
        v = std::to_string(in.integer(key.c_str()));
        break;
      case AxisKind::number:
        v = fmt::format("{}", in.number(key.c_str()));
        break;
      case AxisKind::boolean:
        v = in.boolean(key.c_str()) ? "on" : "off";
        break;
      case AxisKind::text:
        v = in.string(key.c_str());
        break;
    }
    // The value through the axis's own parser, so an unknown dtype or mask is refused here.
    try {
      const std::vector<std::string> canonical = axis.parse(v);
      if (canonical.size() != 1) throw std::invalid_argument("one value expected");
      axis.set(s, canonical.front());
    } catch (const std::invalid_argument& e) {
      malformed(fmt::format("field '{}': {}", in.name(key.c_str()), e.what()));
    }
  }
  return s;
}

TimingResult read_timing(const Reader& in) {
  TimingResult t;
  t.mode = in.string("mode");
  t.median_us = in.number("median_us");
  t.mean_us = in.number("mean_us");
  t.min_us = in.number("min_us");
  t.p5_us = in.number("p5_us");
  t.p95_us = in.number("p95_us");
  t.cv = in.number("cv");
  t.rel_noise = in.number("rel_noise");
  t.samples = in.integer("samples");
  t.launches_per_sample = in.integer("launches_per_sample");
  t.noisy = in.boolean("noisy");
  t.stop_reason = in.string("stop_reason");
  t.dropped_throttled = in.integer("dropped_throttled");
  if (in.has("clock_settling")) t.clock_settling = in.integer("clock_settling");  // added later
  t.clock_mhz = in.number("clock_mhz");
  if (in.version() >= 2) {
    t.clock_policy = in.string("clock_policy");
    t.power_w = in.number("power_w");
    t.copies = in.integer("copies");
    t.host_load = in.number("host_load");
    t.host_busy = in.number("host_busy");
  }
  return t;
}

MemoryResult read_memory(const Reader& in) {
  MemoryResult m;
  m.peak_bytes = in.integer("peak_bytes");
  m.extra_bytes = in.integer("extra_bytes");
  m.analytic_bytes = in.integer("analytic_bytes");
  m.workspace_bytes = in.integer("workspace_bytes");
  m.process_hwm_bytes = in.integer("process_hwm_bytes");
  return m;
}

VerifyResult read_verify(const Reader& in) {
  VerifyResult v;
  v.checked = in.boolean("checked");
  v.max_abs_err = in.number("max_abs_err");
  v.rel_l2_err = in.number("rel_l2_err");
  v.tolerance = in.number("tolerance");
  v.lse_max_abs_err = in.number("lse_max_abs_err");
  v.lse_tolerance = in.number("lse_tolerance");
  v.rows_checked = in.integer("rows_checked");
  v.rows_total = in.integer("rows_total");
  v.nan_count = in.integer("nan_count");
  v.sampling = in.string("sampling");
  v.detail = in.string("detail");
  if (in.version() >= 3) {
    v.seconds = in.number("seconds");
    v.launches_checked = in.integer("launches_checked");
    v.reference_disagreement = in.number("reference_disagreement");
  }
  return v;
}

std::vector<KernelRecord> read_kernels(const Reader& in) {
  const Json& array = in.get("kernels");
  if (!array.is_array()) malformed("field 'kernels' must be an array");
  std::vector<KernelRecord> kernels;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Reader k(array[i], fmt::format("kernels[{}]", i));
    kernels.push_back({k.string("name"), k.integer("count"), k.number("total_us")});
  }
  return kernels;
}

std::map<std::string, std::string> read_env(const Reader& in) {
  const Json& object = in.get("env");
  if (!object.is_object()) malformed("field 'env' must be an object");
  std::map<std::string, std::string> env;
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) malformed(fmt::format("field 'env.{}' must be a string", key));
    env.emplace(key, value.get<std::string>());
  }
  return env;
}

ProviderTraits read_traits(const Reader& in) {
  ProviderTraits t;
  t.name = in.string("name");
  t.description = in.string("description");
  t.device = in.choice("device", parse_device_kind, "cpu, cuda");
  t.family = in.choice("family", parse_family, "reference, naive, math, fused, dispatcher, test");
  t.fused = in.boolean("fused");
  t.library = in.string("library");
  t.library_version = in.string("library_version");
  t.in_default_set = in.boolean("in_default_set");
  t.role = in.choice("role", parse_role, "\"\", baseline, gqa_expansion");
  t.variant_of = in.string("variant_of");
  t.forward = in.boolean("forward");
  t.backward = in.boolean("backward");
  t.writes_lse = in.boolean("writes_lse");
  if (in.has("paged_kv")) t.paged_kv = in.boolean("paged_kv");
  if (in.has("fp8")) t.fp8 = in.boolean("fp8");
  if (in.has("softcap")) t.softcap = in.boolean("softcap");
  if (in.has("sinks")) t.sinks = in.boolean("sinks");
  if (in.has("ragged")) t.ragged = in.boolean("ragged");
  if (in.has("own_streams")) t.own_streams = in.boolean("own_streams");
  // Rows written before quantized providers existed have neither.
  if (in.has("quantization")) t.quantization = in.string("quantization");
  if (in.has("output_tolerance")) t.output_tolerance = in.number("output_tolerance");
  if (in.has("prepare_allowance_s")) t.prepare_allowance_s = in.number("prepare_allowance_s");
  return t;
}

std::optional<Dim3> read_dim3(const Reader& in, const char* key) {
  const Json& v = in.get(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_array() || v.size() != 3)
    malformed(fmt::format("field '{}' must be [x, y, z]", in.name(key)));
  Dim3 d;
  d.x = static_cast<uint32_t>(Reader::to_integer(v[0], in.name(key)));
  d.y = static_cast<uint32_t>(Reader::to_integer(v[1], in.name(key)));
  d.z = static_cast<uint32_t>(Reader::to_integer(v[2], in.name(key)));
  return d;
}

std::vector<TraceEvent> read_events(const Reader& in, const char* key) {
  const Json& array = in.get(key);
  if (!array.is_array()) malformed(fmt::format("field '{}' must be an array", in.name(key)));
  std::vector<TraceEvent> events;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Reader e(array[i], fmt::format("{}[{}]", in.name(key), i));
    TraceEvent t;
    t.name = e.string("name");
    t.category = e.choice("category", parse_kernel_category, "a kernel category");
    t.kind = e.choice("kind", parse_trace_kind, "kernel, memcpy, memset, range");
    t.stream = static_cast<uint32_t>(e.integer("stream"));
    t.start_ns = static_cast<uint64_t>(e.integer("start_ns"));
    t.end_ns = static_cast<uint64_t>(e.integer("end_ns"));
    t.grid = read_dim3(e, "grid");
    t.block = read_dim3(e, "block");
    t.bytes = static_cast<uint64_t>(e.integer("bytes"));
    events.push_back(std::move(t));
  }
  return events;
}

PointTrace read_trace(const Reader& in) {
  PointTrace t;
  t.ranges = read_events(in, "ranges");
  t.device_events = read_events(in, "device_events");
  t.timed_stream = static_cast<uint32_t>(in.integer("timed_stream"));
  t.timed_launches = static_cast<int>(in.integer("timed_launches"));
  return t;
}

}  // namespace

nlohmann::ordered_json to_json(const ProviderTraits& t) {
  return traits_json(t);
}

ProviderTraits traits_from_json(const nlohmann::json& j) {
  return read_traits(Reader(j, "traits"));
}

nlohmann::ordered_json to_json(const Spec& s) {
  return spec_json(s);
}

Spec spec_from_json(const nlohmann::json& j) {
  return read_spec(Reader(j, "spec"));
}

nlohmann::ordered_json to_json(const Result& r) {
  OrderedJson j;
  j["schema_version"] = r.schema_version;
  j["provider"] = r.provider;
  j["traits"] = traits_json(r.traits);
  j["status"] = to_string(r.status);
  j["fault"] = to_string(r.fault);
  j["reason"] = r.reason;
  j["spec"] = spec_json(r.spec);
  j["seed"] = r.seed ? OrderedJson(*r.seed) : OrderedJson(nullptr);
  j["device"] = r.device;
  j["timing"] = timing_json(r.timing);
  j["tflops"] = number(r.tflops);
  j["gbps"] = number(r.gbps);
  j["tokens_per_s"] = number(r.tokens_per_s);
  j["flops"] = number(r.flops);
  j["bytes"] = number(r.bytes);
  j["flop_convention"] = r.flop_convention;
  j["pct_peak_flops"] = optional_number(r.pct_peak_flops);
  j["pct_peak_bw"] = optional_number(r.pct_peak_bw);
  j["bound"] = r.bound;
  j["peak_tflops"] = number(r.peak_tflops);
  j["peak_tbps"] = number(r.peak_tbps);
  j["peaks_source"] = r.peaks_source;
  if (r.peak_clock_mhz > 0) j["peak_clock_mhz"] = number(r.peak_clock_mhz);
  if (r.pct_peak_flops_at_clock) j["pct_peak_flops_at_clock"] = number(*r.pct_peak_flops_at_clock);
  if (r.datasheet_tflops > 0) j["datasheet_tflops"] = number(r.datasheet_tflops);
  if (r.pct_datasheet_flops) j["pct_datasheet_flops"] = number(*r.pct_datasheet_flops);
  j["memory"] = memory_json(r.memory);
  j["verify"] = verify_json(r.verify);
  j["kernels"] = kernels_json(r.kernels);
  j["kernels_note"] = r.kernels_note;
  if (!r.provider_note.empty()) j["provider_note"] = r.provider_note;
  if (r.prepare_s) j["prepare_s"] = number(*r.prepare_s);
  if (r.measure_s) j["measure_s"] = number(*r.measure_s);
  if (r.audits) {
    j["audit_s"] = number(r.audits->total());
    if (r.audits->unsplit == 0) {
      j["audits"] = {{"outputs_s", number(r.audits->outputs)},
                     {"inputs_s", number(r.audits->inputs)},
                     {"launches_s", number(r.audits->launches)},
                     {"streams_s", number(r.audits->streams)}};
    }
  }
  j["env"] = r.env;
  j["started_at"] = r.started_at;
  if (r.trace) j["trace"] = trace_json(*r.trace);
  return j;
}

Result result_from_json(const nlohmann::json& j) {
  const Reader top(j, "");
  const int64_t version = top.integer("schema_version");
  if (version < 1 || version > kSchemaVersion) {
    throw std::runtime_error(fmt::format("journal schema_version {}, this build reads 1 to {}",
                                         version, kSchemaVersion));
  }
  const Reader in(j, "", static_cast<int>(version));
  Result r;
  r.schema_version = kSchemaVersion;
  r.provider = in.string("provider");
  r.status = in.choice("status", parse_status,
                       "passed, incorrect, not_supported, oom, failed, timeout, skipped");
  r.reason = in.string("reason");
  r.spec = read_spec(in.object("spec"));
  if (version >= 2) {
    r.traits = read_traits(in.object("traits"));
    r.fault = in.choice("fault", parse_fault, "none, invalid, not_supported, oom, ...");
    const Json& seed = in.get("seed");
    if (!seed.is_null() && !seed.is_number_unsigned()) {
      malformed("field 'seed' must be an integer from 0 to 2^64-1, or null");
    }
    if (!seed.is_null()) r.seed = seed.get<uint64_t>();
  } else {
    r.traits.name = r.provider;  // schema 1 rows declared nothing: the reader may look it up
  }
  r.device = in.string("device");
  r.timing = read_timing(in.object("timing"));
  r.tflops = in.number("tflops");
  r.gbps = in.number("gbps");
  r.tokens_per_s = in.number("tokens_per_s");
  r.flops = in.number("flops");
  r.bytes = in.number("bytes");
  r.flop_convention = in.string("flop_convention");
  r.pct_peak_flops = in.optional_number("pct_peak_flops");
  r.pct_peak_bw = in.optional_number("pct_peak_bw");
  r.bound = in.string("bound");
  if (version >= 2) {
    r.peak_tflops = in.number("peak_tflops");
    r.peak_tbps = in.number("peak_tbps");
    r.peaks_source = in.string("peaks_source");
  }
  if (j.contains("peak_clock_mhz")) r.peak_clock_mhz = in.number("peak_clock_mhz");
  if (j.contains("pct_peak_flops_at_clock"))
    r.pct_peak_flops_at_clock = in.optional_number("pct_peak_flops_at_clock");
  if (j.contains("datasheet_tflops")) r.datasheet_tflops = in.number("datasheet_tflops");
  if (j.contains("pct_datasheet_flops"))
    r.pct_datasheet_flops = in.optional_number("pct_datasheet_flops");
  r.memory = read_memory(in.object("memory"));
  r.verify = read_verify(in.object("verify"));
  r.kernels = read_kernels(in);
  r.kernels_note = in.string("kernels_note");
  r.provider_note = in.string_or_empty("provider_note");
  if (j.contains("prepare_s")) r.prepare_s = in.optional_number("prepare_s");
  if (j.contains("measure_s")) r.measure_s = in.optional_number("measure_s");
  if (j.contains("audits")) {
    const Reader a = in.object("audits");
    r.audits = AuditSeconds{a.number("outputs_s"), a.number("inputs_s"), a.number("launches_s"),
                            a.number("streams_s")};
  } else if (j.contains("audit_s")) {
    if (const auto total = in.optional_number("audit_s"))
      r.audits = AuditSeconds{.unsplit = *total};
  }
  r.env = read_env(in);
  r.started_at = in.string("started_at");
  if (j.contains("trace")) r.trace = read_trace(in.object("trace"));
  return r;
}

}  // namespace attnprof
