// What a Python provider declares (python/attnprof/_loader.py describe()): its traits, whether it
// can run in that interpreter and why not, its fingerprint entries. Read by the main process
// (python_catalog.cpp, from `python3 -m attnprof._catalog`) and by the Python worker
// (c_api.cpp, from the worker's own description).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnprof/env.hpp"
#include "attnprof/traits.hpp"

namespace attnprof::python {

struct ProviderInfo {
  ProviderTraits traits;
  bool available = false;
  std::string reason;
  Fingerprint fingerprint;
};

// A JSON array of descriptions; throws std::runtime_error naming what is malformed.
std::vector<ProviderInfo> parse_provider_infos(const nlohmann::json& array);

}  // namespace attnprof::python
