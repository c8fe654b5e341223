#include "run/protocol.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "attnprof/result_json.hpp"

namespace attnprof::protocol {

namespace {

using Json = nlohmann::json;

[[noreturn]] void bad(const std::string& what) {
  throw std::runtime_error("worker protocol: " + what);
}

Json parse_line(const std::string& line, const char* what) {
  try {
    Json j = Json::parse(line);
    if (!j.is_object()) bad(fmt::format("{}: expected a JSON object", what));
    return j;
  } catch (const Json::exception& e) {
    constexpr std::size_t kShown = 120;
    bad(fmt::format("{}: not JSON ({}): '{}'", what, e.what(),
                    line.size() > kShown ? line.substr(0, kShown) + "..." : line));
  }
}

// Reads a field, naming it in the message when it is missing or of the wrong type.
template <class T>
T field(const Json& j, const char* key) {
  try {
    return j.at(key).get<T>();
  } catch (const Json::exception&) {
    bad(fmt::format("missing or mistyped field '{}'", key));
  }
}

template <class T, class Parse>
T choice(const Json& j, const char* key, Parse parse) {
  const auto text = field<std::string>(j, key);
  const auto v = parse(text);
  if (!v) bad(fmt::format("field '{}': unknown value '{}'", key, text));
  return *v;
}

// Specs travel in the journal's own form (result_json.hpp), so the two never drift apart.
Spec read_spec(const Json& j) {
  try {
    return spec_from_json(j);
  } catch (const std::runtime_error& e) {
    bad(e.what());
  }
}

Json options_json(const RunOptions& o) {
  const StoppingRule& r = o.measure.rule;
  return {{"seed", o.seed},
          {"timing", to_string(o.measure.mode)},
          {"clock_policy", to_string(o.measure.clock)},
          {"rotate", o.measure.rotate},
          {"launches_per_sample", o.measure.launches_per_sample},
          {"trace_launches", o.trace_launches},
          {"profile_one_launch", o.profile_one_launch},
          {"auto_peaks", o.auto_peaks == AutoPeaks::off   ? "off"
                         : o.auto_peaks == AutoPeaks::gpu ? "gpu"
                                                          : "any"},
          {"min_samples", r.min_samples},
          {"max_samples", r.max_samples},
          {"max_noise", r.max_noise},
          {"min_time_s", r.min_time_s},
          {"timeout_s", r.timeout_s},
          {"timer_resolution_s", r.timer_resolution_s},
          {"over_limit_s", r.over_limit_s},
          {"memory_limit_bytes", o.memory_limit_bytes},
          {"full_check_flops", o.verify.full_check_flops},
          {"verify_full", o.verify.full},
          {"verify_repeats", o.verify.repeats},
          {"sample_rows", o.verify.sample_rows},
          {"grad_group_work", o.verify.grad_group_work},
          {"warmup_launches", o.warmup_launches},
          {"trace_kernels", o.trace_kernels},
          {"threads", o.threads}};
}

RunOptions read_options(const Json& j) {
  RunOptions o;
  StoppingRule& r = o.measure.rule;
  o.seed = field<uint64_t>(j, "seed");
  o.measure.mode = choice<TimingMode>(j, "timing", parse_timing_mode);
  o.measure.clock = choice<ClockPolicy>(j, "clock_policy", parse_clock_policy);
  o.measure.rotate = field<bool>(j, "rotate");
  o.measure.launches_per_sample = field<int64_t>(j, "launches_per_sample");
  o.trace_launches = field<int>(j, "trace_launches");
  o.profile_one_launch = field<bool>(j, "profile_one_launch");
  const std::string auto_peaks = field<std::string>(j, "auto_peaks");
  o.auto_peaks = auto_peaks == "gpu"   ? AutoPeaks::gpu
                 : auto_peaks == "any" ? AutoPeaks::any
                                       : AutoPeaks::off;
  r.min_samples = field<int64_t>(j, "min_samples");
  r.max_samples = field<int64_t>(j, "max_samples");
  r.max_noise = field<double>(j, "max_noise");
  r.min_time_s = field<double>(j, "min_time_s");
  r.timeout_s = field<double>(j, "timeout_s");
  r.timer_resolution_s = field<double>(j, "timer_resolution_s");
  r.over_limit_s = field<double>(j, "over_limit_s");
  o.memory_limit_bytes = field<int64_t>(j, "memory_limit_bytes");
  o.verify.full_check_flops = field<double>(j, "full_check_flops");
  o.verify.full = field<bool>(j, "verify_full");
  o.verify.repeats = field<int>(j, "verify_repeats");
  o.verify.sample_rows = field<int64_t>(j, "sample_rows");
  o.verify.grad_group_work = field<double>(j, "grad_group_work");
  o.warmup_launches = field<int>(j, "warmup_launches");
  o.trace_kernels = field<bool>(j, "trace_kernels");
  o.threads = field<int>(j, "threads");
  return o;
}

}  // namespace

std::string encode_hello(const Hello& hello) {
  Json engines = Json::array();
  for (const WorkerEngine& e : hello.engines) {
    engines.push_back({{"kind", to_string(e.kind)},
                       {"available", e.available},
                       {"reason", e.reason},
                       {"device", e.device},
                       {"threads", e.threads},
                       {"memory_bytes", e.memory_bytes},
                       {"cc", {e.cc_major, e.cc_minor}},
                       {"sm_count", e.sm_count},
                       {"env", e.env}});
  }
  const Json j = {{"hello",
                   {{"protocol", hello.protocol},
                    {"pid", hello.pid},
                    {"engines", engines},
                    {"providers", hello.providers}}}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Hello decode_hello(const std::string& line) {
  const Json j = parse_line(line, "hello");
  if (!j.contains("hello")) bad("expected the worker's hello first");
  const Json& h = j.at("hello");
  Hello hello;
  hello.protocol = field<int>(h, "protocol");
  if (hello.protocol != kVersion) {
    bad(fmt::format("worker speaks protocol {}, this supervisor {}", hello.protocol, kVersion));
  }
  hello.pid = field<int64_t>(h, "pid");
  for (const Json& e : field<Json>(h, "engines")) {
    WorkerEngine info;
    info.kind = choice<DeviceKind>(e, "kind", parse_device_kind);
    info.available = field<bool>(e, "available");
    info.reason = field<std::string>(e, "reason");
    info.device = field<std::string>(e, "device");
    info.threads = field<int>(e, "threads");
    info.memory_bytes = field<int64_t>(e, "memory_bytes");
    if (e.contains("cc")) {  // optional: added without a new protocol version
      const auto cc = field<std::vector<int>>(e, "cc");
      if (cc.size() == 2) info.cc_major = cc[0], info.cc_minor = cc[1];
      info.sm_count = field<int>(e, "sm_count");
    }
    info.env = field<Fingerprint>(e, "env");
    hello.engines.push_back(std::move(info));
  }
  hello.providers = field<std::map<std::string, Fingerprint>>(h, "providers");
  return hello;
}

std::string encode_request(const Request& request) {
  const Json j = {{"point",
                   {{"provider", request.provider},
                    {"spec", to_json(request.spec)},
                    {"options", options_json(request.options)},
                    {"settings", request.settings}}}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Request decode_request(const std::string& line) {
  const Json j = parse_line(line, "request");
  const Json point = field<Json>(j, "point");
  Request r;
  r.provider = field<std::string>(point, "provider");
  r.spec = read_spec(field<Json>(point, "spec"));
  r.options = read_options(field<Json>(point, "options"));
  r.settings = field<Settings>(point, "settings");
  return r;
}

std::string encode_reply(const Result& row) {
  // The row travels as the journal writes it: one codec, one schema.
  const nlohmann::ordered_json j = {{"row", to_json(row)}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Reply decode_reply(const std::string& line) {
  const Json j = parse_line(line, "reply");
  Reply reply;
  try {
    reply.row = result_from_json(field<Json>(j, "row"));
  } catch (const std::runtime_error& e) {
    bad(fmt::format("reply row: {}", e.what()));
  }
  return reply;
}

}  // namespace attnprof::protocol
