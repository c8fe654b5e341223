// The Python worker's entry points (c_api.h): the worker protocol served by the same code as
// `attnprof worker`, over providers that call back into Python.
#include "python/c_api.h"

#include <fmt/format.h>

#include <charconv>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/trace.hpp"
#include "attnprof/worker.hpp"
#include "python/callback_provider.hpp"
#include "python/python_info.hpp"

#define ATTNPROF_EXPORT __attribute__((visibility("default")))

namespace {

// `attnprof worker`'s options: --device auto|cpu|cuda, --threads N, --parent PID.
attnprof::WorkerOptions parse_options(int32_t argc, const char* const* argv) {
  attnprof::WorkerOptions o;
  for (int32_t i = 0; i + 1 < argc; i += 2) {
    const std::string_view key = argv[i], value = argv[i + 1];
    int64_t number = 0;
    const bool numeric =
        std::from_chars(value.data(), value.data() + value.size(), number).ec == std::errc{};
    if (key == "--device") {
      o.device = std::string(value);
    } else if (key == "--threads" && numeric) {
      o.threads = static_cast<int>(number);
    } else if (key == "--parent" && numeric) {
      o.parent_pid = number;
    } else {
      throw std::invalid_argument(fmt::format("unknown worker option {} {}", key, value));
    }
  }
  return o;
}

}  // namespace

extern "C" ATTNPROF_EXPORT int32_t attnprof_py_abi_version(void) {
  return ATTNPROF_PY_ABI_VERSION;
}

static_assert(sizeof(attnprof_tensor) == ATTNPROF_PY_TENSOR_BYTES);
static_assert(sizeof(attnprof_io) == ATTNPROF_PY_IO_BYTES);

extern "C" ATTNPROF_EXPORT int64_t attnprof_py_struct_size(int32_t which) {
  return which == 0 ? int64_t{sizeof(attnprof_tensor)} : int64_t{sizeof(attnprof_io)};
}

extern "C" ATTNPROF_EXPORT int32_t attnprof_py_serve(int32_t argc, const char* const* argv,
                                                     const char* providers_json,
                                                     attnprof_callback callback) {
  try {
    const attnprof::WorkerOptions options = parse_options(argc, argv);
    std::vector<std::unique_ptr<attnprof::Provider>> owned;
    std::vector<attnprof::Provider*> providers;
    int64_t index = 0;
    for (attnprof::python::ProviderInfo& info :
         attnprof::python::parse_provider_infos(nlohmann::json::parse(providers_json))) {
      owned.push_back(attnprof::python::make_callback_provider(index++, std::move(info), callback));
      providers.push_back(owned.back().get());
    }
    return attnprof::serve_worker(options, providers, attnprof::trace_hooks_factory());
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnprof python worker: {}\n", e.what());
    return 2;
  }
}
