// The main process's view of a Python provider: its declared traits and availability (from the
// catalog) and the worker group its points run in. It never runs a point itself.
#pragma once

#include <memory>
#include <string>

#include "attnprof/provider.hpp"
#include "python/python_info.hpp"

namespace attnprof::python {

std::unique_ptr<Provider> make_python_provider(ProviderInfo info, WorkerGroup group);

}  // namespace attnprof::python
