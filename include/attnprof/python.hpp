// Python providers (docs/providers.md, "Python providers"): any Python callable measured by the
// same instrument. The main process learns them from `python3 -m attnprof._catalog` (traits,
// availability with the reason); their points run in a worker group of their own, `python3 -m
// attnprof._worker`, which loads libattnprof_py.so (the instrument behind a C ABI) and serves the
// usual worker protocol.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnprof/provider.hpp"

namespace attnprof {

struct PythonSetup {
  // The interpreter; "" for $ATTNPROF_PYTHON, else the first python3 on PATH that has torch,
  // else the first that has numpy, else the first python3 on PATH.
  std::string python;
  // --py-provider arguments: FILE.py:NAME, FILE.py or a folder of .py files.
  std::vector<std::string> provider_files;
};

struct PythonProviders {
  std::vector<std::unique_ptr<Provider>> providers;
  std::string python;              // the interpreter they run in, with its version
  std::string unavailable;         // why there are none, in one line ("" when the catalog loaded)
  std::vector<std::string> added;  // the names the user's --py-provider files added
};

// Runs the catalog. A provider file that cannot be loaded throws std::invalid_argument naming it
// (bad input); a missing interpreter or package leaves `unavailable` set instead.
PythonProviders load_python_providers(const PythonSetup& setup);

}  // namespace attnprof
