#include "python_options.hpp"

#include "attnprof/python.hpp"
#include "attnprof/registry.hpp"

namespace attnprof::cli {

void add_python_options(CLI::App* sub, PythonCliOptions& o) {
  sub->add_option("--python", o.python,
                  "Interpreter of the Python providers (default $ATTNPROF_PYTHON, else the first "
                  "python3 on PATH that has torch)");
  sub->add_option("--py-provider", o.py_providers,
                  "Add Python providers: FILE.py:NAME (a Provider class or a function), "
                  "FILE.py or a folder (repeatable)");
}

std::string register_python_providers(const PythonCliOptions& o, bool always,
                                      const std::string& provider_patterns) {
  static bool loaded = false;
  static std::string unavailable;
  const bool asked = always || !o.py_providers.empty() ||
                     provider_patterns.find("py.") != std::string::npos ||
                     provider_patterns.find("py*") != std::string::npos;
  if (!asked || loaded) return loaded ? unavailable : "";
  PythonProviders found = load_python_providers({o.python, o.py_providers});
  loaded = true;
  unavailable = found.unavailable;
  add_providers(std::move(found.providers));
  return unavailable;
}

}  // namespace attnprof::cli
