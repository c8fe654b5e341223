#include "python_options.hpp"

#include <stdexcept>

#include "attnprof/python.hpp"
#include "attnprof/registry.hpp"

namespace attnprof::cli {

namespace {

// Whether a pattern of `patterns` matches no provider of this build's table (then the Python
// providers may have it: py.*, ort.*): the registry's own selection says so by refusing it.
bool names_unknown(const std::string& patterns) {
  try {
    (void)select_providers(patterns);
    return false;
  } catch (const std::invalid_argument&) {
    return true;
  }
}

}  // namespace

void add_python_options(CLI::App* sub, PythonCliOptions& o) {
  sub->add_option("--python", o.python,
                  "Interpreter of the Python providers (default $ATTNPROF_PYTHON, else the first "
                  "python3 on PATH that has torch)");
  sub->add_option("--py-provider", o.py_providers,
                  "Add Python providers: FILE.py:NAME (a Provider class or a function), "
                  "FILE.py or a folder (repeatable)");
}

namespace {
std::vector<std::string>& added_names() {
  static std::vector<std::string> names;
  return names;
}
}  // namespace

std::vector<std::string> added_python_providers() {
  return added_names();
}

std::string register_python_providers(const PythonCliOptions& o, bool always,
                                      const std::string& provider_patterns) {
  static bool loaded = false;
  static std::string unavailable;
  const bool asked = always || !o.py_providers.empty() || names_unknown(provider_patterns);
  if (!asked || loaded) return loaded ? unavailable : "";
  PythonProviders found = load_python_providers({o.python, o.py_providers});
  loaded = true;
  unavailable = found.unavailable;
  added_names() = found.added;
  add_providers(std::move(found.providers));
  return unavailable;
}

std::vector<Provider*> chosen_providers(const std::string& patterns, bool on_cuda) {
  if (!patterns.empty()) return select_providers(patterns);
  std::vector<Provider*> out = default_providers(on_cuda ? DeviceKind::cuda : DeviceKind::cpu);
  for (const std::string& name : added_names()) {
    Provider* p = find_provider(name);
    if (p && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

}  // namespace attnprof::cli
