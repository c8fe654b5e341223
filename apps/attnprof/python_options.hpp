// --python and --py-provider, shared by list, run, tune and trace: which interpreter runs the
// Python providers and which of the user's files add providers (attnprof/python.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "attnprof/provider.hpp"

namespace attnprof::cli {

struct PythonCliOptions {
  std::string python;
  std::vector<std::string> py_providers;
};

void add_python_options(CLI::App* sub, PythonCliOptions& o);

// Adds the Python providers to the registry (once per process) when `always` (attnprof list), when
// --py-provider is given, or when a pattern of `provider_patterns` matches none of the C++ ones.
// Returns why there are none, in one line ("" when they loaded or were not asked for). Throws
// std::invalid_argument for a --py-provider file that cannot be loaded.
std::string register_python_providers(const PythonCliOptions& o, bool always,
                                      const std::string& provider_patterns);
// The providers the --py-provider files added (after register_python_providers): a run without
// --providers runs them beside the default set.
std::vector<std::string> added_python_providers();
// Why the Python providers could not load, when register_python_providers tried ("" otherwise).
std::string python_providers_unavailable();
}  // namespace attnprof::cli
