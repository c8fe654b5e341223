// The line protocol between the supervisor and its worker (`attnprof worker`), one JSON object
// per line, over the worker's stdin and stdout:
//
//   worker -> supervisor, once at start:
//     {"hello":{"protocol":3,"pid":N,"engines":[{"kind":"cpu","available":true,"reason":"",
//               "device":"...","threads":N,"memory_bytes":N,"cc":[M,m],
//               "sm_count":N,"env":{...}}, ...],
//               "providers":{"cudnn.sdpa":{"cudnn":"9.19.0"}, ...}}}
// (protocol 3: the point carries its provider's settings, which the worker hands to prepare();
// protocol 2 had none, the worker read them from its environment)
//   supervisor -> worker, one per point:
//     {"point":{"provider":"cpu.naive","spec":{...},"options":{...},"settings":{"NAME":"VALUE"}}}
//   worker -> supervisor, one per point:
//     {"row":<the row, result_json.hpp>}
//
// A row whose fault is sticky_device says the worker's state cannot be trusted after this point:
// the supervisor replaces it before the next point. The worker closes on end of input.
// "providers" holds each provider's fingerprint entries as the worker sees them: a group's worker
// loads its own library versions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/env.hpp"
#include "attnprof/result.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/worker.hpp"

namespace attnprof::protocol {

inline constexpr int kVersion = 3;

struct Hello {
  int protocol = kVersion;
  int64_t pid = 0;
  std::vector<WorkerEngine> engines;             // the engines built into the worker
  std::map<std::string, Fingerprint> providers;  // Provider::fingerprint() by name, if not empty
};

struct Request {
  std::string provider;
  Spec spec;
  RunOptions options;
  Settings settings;  // the point's values of the provider's settings (provider_settings.hpp)
};

struct Reply {
  Result row;
};

// Each encoder returns one line without its newline; each decoder throws std::runtime_error
// with a one-line message on anything else.
std::string encode_hello(const Hello& hello);
Hello decode_hello(const std::string& line);
std::string encode_request(const Request& request);
Request decode_request(const std::string& line);
std::string encode_reply(const Result& row);
Reply decode_reply(const std::string& line);

}  // namespace attnprof::protocol
