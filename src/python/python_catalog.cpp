// load_python_providers (attnprof/python.hpp): finds the interpreter, the attnprof package and
// libattnprof_py.so, runs `python3 -m attnprof._catalog` once and makes a proxy per provider.
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "attnprof/python.hpp"
#include "python/python_info.hpp"
#include "python/python_provider.hpp"
#include "run/child_process.hpp"

namespace attnprof {

namespace {

namespace fs = std::filesystem;

constexpr auto kCatalogTimeout = std::chrono::seconds(60);

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The folder holding the attnprof package: $ATTNPROF_PYTHON_DIR, an install's share/, the
// source tree this binary was built from.
std::string package_dir() {
  std::vector<fs::path> candidates;
  if (const std::string d = env("ATTNPROF_PYTHON_DIR"); !d.empty()) candidates.emplace_back(d);
  const fs::path exe = executable_dir();
  candidates.push_back(exe / ".." / "share" / "attnprof" / "python");
  candidates.push_back(exe / "python");
#if defined(ATTNPROF_SOURCE_PYTHON)
  candidates.emplace_back(ATTNPROF_SOURCE_PYTHON);
#endif
  for (const fs::path& c : candidates)
    if (is_file(c / "attnprof" / "_worker.py")) return fs::weakly_canonical(c).string();
  return "";
}

// libattnprof_py.so: $ATTNPROF_PY_LIB, next to the binary, or in ../lib.
std::string library() {
  if (const std::string l = env("ATTNPROF_PY_LIB"); !l.empty()) return is_file(l) ? l : "";
  const fs::path exe = executable_dir();
  for (const fs::path& c : {exe / "libattnprof_py.so", exe / ".." / "lib" / "libattnprof_py.so"})
    if (is_file(c)) return fs::weakly_canonical(c).string();
  return "";
}

// Runs argv to its end; the exit status, or -1 when it did not finish in time.
int run_quietly(const std::vector<std::string>& argv, std::chrono::seconds limit) {
  try {
    ChildProcess child(argv);
    std::string line;
    const auto deadline = ChildProcess::Clock::now() + limit;
    while (true) {
      const ChildProcess::Wait w = child.read_line(line, deadline, [] { return false; });
      if (w == ChildProcess::Wait::eof) break;
      if (w != ChildProcess::Wait::line) return -1;
    }
    const int status = child.reap(std::chrono::milliseconds(2000));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

// The interpreter: the one named, else the first python3 on PATH that has torch, else the first
// that has numpy, else the first.
std::string interpreter(const PythonSetup& setup) {
  if (!setup.python.empty()) return setup.python;
  if (const std::string p = env("ATTNPROF_PYTHON"); !p.empty()) return p;
  std::vector<std::string> found;
  std::set<std::string> seen;
  const std::string path = env("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    const size_t colon = path.find(':', start);
    const std::string dir =
        path.substr(start, colon == std::string::npos ? path.npos : colon - start);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "python3";
    std::error_code ec;
    const fs::path real = fs::canonical(candidate, ec);
    if (!ec && ::access(candidate.c_str(), X_OK) == 0 && seen.insert(real.string()).second)
      found.push_back(candidate.string());
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  // torch first (the GPU providers), then numpy (the CPU one), then any.
  for (const char* module : {"torch", "numpy"}) {
    for (const std::string& p : found) {
      const int rc = run_quietly(
          {p, "-c",
           fmt::format(
               "import importlib.util,sys; sys.exit(importlib.util.find_spec('{}') is None)",
               module)},
          std::chrono::seconds(20));
      if (rc == 0) return p;
    }
  }
  return found.empty() ? "" : found.front();
}

std::string python_path(const std::string& dir) {
  const std::string old = env("PYTHONPATH");
  return "PYTHONPATH=" + dir + (old.empty() ? "" : ":" + old);
}

}  // namespace

PythonProviders load_python_providers(const PythonSetup& setup) {
  PythonProviders out;
  const std::string python = interpreter(setup);
  if (python.empty()) {
    out.unavailable = "no python3 on PATH (name one with --python or ATTNPROF_PYTHON)";
    return out;
  }
  const std::string dir = package_dir();
  if (dir.empty()) {
    out.unavailable =
        "the attnprof Python package was not found (set ATTNPROF_PYTHON_DIR to the repo's python/)";
    return out;
  }
  std::vector<std::string> argv = {python, "-m", "attnprof._catalog"};
  for (const std::string& f : setup.provider_files) {
    argv.push_back("--provider-file");
    argv.push_back(fs::absolute(f).string());
  }
  std::string line;
  std::string why;
  try {
    ChildProcess child(argv, {python_path(dir)});
    const auto w =
        child.read_line(line, ChildProcess::Clock::now() + kCatalogTimeout, [] { return false; });
    if (w != ChildProcess::Wait::line) {
      child.kill_and_reap();
      for (const std::string& s : child.stderr_tail()) why = s;  // the last line says most
      why = w == ChildProcess::Wait::timeout ? "no answer within 60 s" : why;
    } else {
      child.finish(std::chrono::milliseconds(2000));
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (line.empty()) {
    out.unavailable =
        fmt::format("{} -m attnprof._catalog failed: {}", python, why.empty() ? "no output" : why);
    return out;
  }
  const nlohmann::json catalog = nlohmann::json::parse(line, nullptr, false);
  if (catalog.is_discarded() || !catalog.is_object()) {
    out.unavailable = fmt::format("{} -m attnprof._catalog said: {}", python, line);
    return out;
  }
  if (const std::string error = catalog.value("error", ""); !error.empty())
    throw std::invalid_argument("--py-provider " + error);
  out.python = fmt::format("{} (Python {})", catalog.value("python", python),
                           catalog.value("python_version", "?"));
  const std::string lib = library();
  WorkerGroup group;
  group.name = "python";
  group.command = {python, "-m", "attnprof._worker", "--lib", lib};
  for (size_t i = 3; i < argv.size(); ++i) group.command.push_back(argv[i]);
  group.command.push_back("--");
  group.env = {python_path(dir)};
  for (const nlohmann::json& j : catalog.at("providers")) {
    if (j.value("added", false)) out.added.push_back(j.at("traits").at("name").get<std::string>());
  }
  for (python::ProviderInfo& info : python::parse_provider_infos(catalog.at("providers"))) {
    if (info.available && lib.empty()) {
      info.available = false;
      info.reason = "libattnprof_py.so not found next to attnprof (build its target attnprof_py)";
    }
    out.providers.push_back(python::make_python_provider(std::move(info), group));
  }
  return out;
}

}  // namespace attnprof
