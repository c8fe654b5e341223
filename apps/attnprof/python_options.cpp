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

namespace {
std::string& unavailable_reason() {
  static std::string reason;
  return reason;
}
}  // namespace

std::string python_providers_unavailable() {
  return unavailable_reason();
}

std::string register_python_providers(const PythonCliOptions& o, bool always,
                                      const std::string& provider_patterns) {
  static bool loaded = false;
  std::string& unavailable = unavailable_reason();
  // The default set (no --providers, or "default") holds the Python providers too.
  const bool asked = always || !o.py_providers.empty() || provider_patterns.empty() ||
                     provider_patterns == "default" || names_unknown(provider_patterns);
  if (!asked || loaded) return loaded ? unavailable : "";
  PythonProviders found = load_python_providers({o.python, o.py_providers});
  loaded = true;
  unavailable = found.unavailable;
  added_names() = found.added;
  add_providers(std::move(found.providers));
  return unavailable;
}

}  // namespace attnprof::cli
