// The line protocol between the supervisor and its worker (`attnprof worker`), one JSON object
// per line, over the worker's stdin and stdout:
//
//   worker -> supervisor, once at start:
//     {"hello":{"protocol":1,"pid":N,"engines":[{"kind":"cpu","available":true,"reason":"",
//               "device":"...","threads":N,"memory_bytes":N,"env":{...}}, ...]}}
//   supervisor -> worker, one per point:
//     {"point":{"provider":"cpu.naive","spec":{...},"options":{...}}}
//   worker -> supervisor, one per point:
//     {"poisoned":false,"row":<to_json_line(result)>}
//
// `poisoned` says the worker's state cannot be trusted after this point (a sticky CUDA error):
// the supervisor replaces it before the next point. The worker closes on end of input.
#pragma once

#include <string>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/env.hpp"
#include "attnprof/result.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/worker.hpp"

namespace attnprof::protocol {

inline constexpr int kVersion = 1;

struct Hello {
  int protocol = kVersion;
  int64_t pid = 0;
  std::vector<WorkerEngine> engines;  // the engines built into the worker
};

struct Request {
  std::string provider;
  Spec spec;
  RunOptions options;
};

struct Reply {
  Result row;
  bool poisoned = false;
};

// Each encoder returns one line without its newline; each decoder throws std::runtime_error
// with a one-line message on anything else.
std::string encode_hello(const Hello& hello);
Hello decode_hello(const std::string& line);
std::string encode_request(const Request& request);
Request decode_request(const std::string& line);
std::string encode_reply(const Result& row, bool poisoned);
Reply decode_reply(const std::string& line);

// The rule for a poisoned worker: the row's reason names a sticky CUDA error (one that leaves
// the context unusable: cudaErrorIllegalAddress, cudaErrorLaunchFailure, ...), or its words
// ("illegal address", "illegal memory access", "unspecified launch failure"), or says "sticky".
bool poisons_worker(const std::string& reason);

}  // namespace attnprof::protocol
