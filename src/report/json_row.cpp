// The JSONL journal row: one Result as one line of JSON, and back. docs/results.md is the schema.
//
// Conventions (the reader accepts exactly what the writer produces, so the round trip is exact):
// - Finite doubles are JSON numbers in the shortest form that reads back to the same bits.
// - Non-finite doubles are the strings "nan", "inf" and "-inf": JSON has no such numbers, and
//   null is taken by absent optional fields (pct_peak_flops, pct_peak_bw). NaN's sign is lost.
// - Every field is required but `seed` and `provider_note`, which older rows lack; unknown
//   fields are ignored. schema_version is checked first, so a row of another version is refused
//   with that reason rather than a missing field.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnprof/sink.hpp"

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

OrderedJson spec_json(const Spec& s) {
  return {{"batch", s.batch},
          {"q_heads", s.q_heads},
          {"kv_heads", s.kv_heads},
          {"q_len", s.q_len},
          {"kv_len", s.kv_len},
          {"head_dim", s.head_dim},
          {"v_head_dim", s.v_head_dim},
          {"dtype", to_string(s.dtype)},
          {"mask", to_string(s.mask)},
          {"mode", to_string(s.mode)},
          {"layout", to_string(s.layout)},
          {"scale", number(s.scale)}};
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
          {"clock_mhz", number(t.clock_mhz)}};
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
          {"detail", v.detail}};
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
  Reader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
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
  Reader object(const char* key) const { return Reader(get(key), name(key)); }

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

  // An unsigned integer field that may be null, or absent in rows written before it existed.
  std::optional<uint64_t> optional_unsigned_or_absent(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_unsigned()) {
      malformed(fmt::format("field '{}' must be an integer from 0 to 2^64-1, or null", name(key)));
    }
    return it->get<uint64_t>();
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
};

Spec read_spec(const Reader& in) {
  Spec s;
  s.batch = in.integer("batch");
  s.q_heads = in.integer("q_heads");
  s.kv_heads = in.integer("kv_heads");
  s.q_len = in.integer("q_len");
  s.kv_len = in.integer("kv_len");
  s.head_dim = in.integer("head_dim");
  s.v_head_dim = in.integer("v_head_dim");
  s.dtype = in.choice("dtype", parse_dtype, kDTypeChoices);
  s.mask = in.choice("mask", parse_mask, kMaskChoices);
  s.mode = in.choice("mode", parse_mode, kModeChoices);
  s.layout = in.choice("layout", parse_layout, kLayoutChoices);
  s.scale = in.number("scale");
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
  t.clock_mhz = in.number("clock_mhz");
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

// nlohmann's parse errors read "[json.exception.parse_error.101] parse error at line 1, column
// 9: syntax error ..."; the line is always 1 here, so keep "column 9: ..." and cap the length
// (the message quotes the last token read, which can be long).
std::string describe_parse_error(const Json::parse_error& e) {
  std::string what = e.what();
  const std::size_t at = what.find("column ");
  if (at != std::string::npos) what = what.substr(at);
  constexpr std::size_t kMaxLength = 160;
  if (what.size() > kMaxLength) what = what.substr(0, kMaxLength) + "...";
  return "invalid JSON at " + what;
}

}  // namespace

std::string to_json_line(const Result& r) {
  OrderedJson j;
  j["schema_version"] = r.schema_version;
  j["provider"] = r.provider;
  j["status"] = to_string(r.status);
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
  j["memory"] = memory_json(r.memory);
  j["verify"] = verify_json(r.verify);
  j["kernels"] = kernels_json(r.kernels);
  j["kernels_note"] = r.kernels_note;
  if (!r.provider_note.empty()) j["provider_note"] = r.provider_note;
  j["env"] = r.env;
  j["started_at"] = r.started_at;
  // Invalid UTF-8 (e.g. raw bytes in an exception message) becomes U+FFFD instead of throwing:
  // a row is never lost to its text. JSON escapes newlines, so the row is always one line.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result from_json_line(const std::string& line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::parse_error& e) {
    malformed(describe_parse_error(e));
  }
  const Reader in(j, "");
  const int64_t version = in.integer("schema_version");
  if (version != kSchemaVersion) {
    throw std::runtime_error(
        fmt::format("journal schema_version {}, this build reads {}", version, kSchemaVersion));
  }
  Result r;
  r.schema_version = kSchemaVersion;
  r.provider = in.string("provider");
  r.status = in.choice("status", parse_status,
                       "passed, incorrect, not_supported, oom, failed, timeout, skipped");
  r.reason = in.string("reason");
  r.spec = read_spec(in.object("spec"));
  r.seed = in.optional_unsigned_or_absent("seed");
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
  r.memory = read_memory(in.object("memory"));
  r.verify = read_verify(in.object("verify"));
  r.kernels = read_kernels(in);
  r.kernels_note = in.string("kernels_note");
  r.provider_note = in.string_or_empty("provider_note");
  r.env = read_env(in);
  r.started_at = in.string("started_at");
  return r;
}

std::string spec_to_json(const Spec& spec) {
  return spec_json(spec).dump();
}

Spec spec_from_json(const std::string& json_object) {
  Json j;
  try {
    j = Json::parse(json_object);
  } catch (const Json::exception& e) {
    malformed(fmt::format("spec is not valid JSON: {}", e.what()));
  }
  return read_spec(Reader(j, "spec"));
}

}  // namespace attnprof
