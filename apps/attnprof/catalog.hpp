// Every provider as `attnprof list` shows it: available here or not, and why. `list` prints it and
// `report` gives it to the seeds' comparison, so both say the same.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attnprof/provider.hpp"
#include "python_options.hpp"

namespace attnprof::cli {

struct Catalog {
  // Every provider of the registry (the Python providers added first), with its availability
  // here: its own, then its engine's.
  std::vector<std::pair<const Provider*, Availability>> providers;
  std::string python_unavailable;  // why no Python provider is listed; "" when they are
};
Catalog provider_catalog(const PythonCliOptions& python);

}  // namespace attnprof::cli
