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

#include "attnprof/child_process.hpp"
#include "attnprof/command_line.hpp"
#include "attnprof/python.hpp"
#include "python/python_info.hpp"
#include "python/python_provider.hpp"

namespace attnprof {

namespace {

namespace fs = std::filesystem;

constexpr auto kCatalogTimeout = std::chrono::seconds(60);

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

fs::path executable_dir() {
  return this_executable().parent_path();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The folder holding the attnprof package: $ATTNPROF_PYTHON_DIR, an install prefix's share/, a
// bundle's python/ beside the binary, the source tree this binary was built from; "" when none
// (a wheel's binary: the package is the interpreter's own, in its site-packages).
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

// What a python3 has, from one probe: a bit per module it can import; -1 when it did not answer.
constexpr int kHasTorch = 1, kHasNumpy = 2, kHasPackage = 4;

int probe(const std::string& python) {
  // The bits travel in the exit status above 16, so a python3 that fails to start is no answer.
  const int rc = run_quietly(
      {python, "-c",
       "import importlib.util as u, sys; sys.exit(16 + sum(b for m, b in (('torch', 1), "
       "('numpy', 2), ('attnprof', 4)) if u.find_spec(m)))"},
      std::chrono::seconds(20));
  return rc >= 16 && rc < 24 ? rc - 16 : -1;
}

// The python3 programs to choose from: the one beside this binary (the environment a wheel was
// installed into), then those on PATH, each folder once.
std::vector<std::string> python_candidates() {
  std::vector<std::string> found;
  std::set<std::string> seen;
  const auto consider = [&](const fs::path& dir) {
    const fs::path candidate = dir / "python3";
    std::error_code ec;
    // The folder resolved, not the program: a venv's python3 links to the system's, and is not it.
    const fs::path folder = fs::canonical(dir, ec);
    if (!ec && ::access(candidate.c_str(), X_OK) == 0 && seen.insert(folder.string()).second)
      found.push_back(candidate.string());
  };
  if (const fs::path exe = executable_dir(); !exe.empty()) consider(exe);
  const std::string path = env("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    const size_t colon = path.find(':', start);
    const std::string dir =
        path.substr(start, colon == std::string::npos ? path.npos : colon - start);
    consider(dir.empty() ? "." : dir);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return found;
}

// The interpreter: the one named, else the first candidate that has torch (the GPU providers),
// else numpy (the CPU one), else any; where no package folder is known (`package` false), only
// those that import the attnprof package count. "" when none does.
std::string interpreter(const PythonSetup& setup, bool package) {
  if (!setup.python.empty()) return setup.python;
  if (const std::string p = env("ATTNPROF_PYTHON"); !p.empty()) return p;
  std::vector<std::pair<std::string, int>> probed;
  for (const std::string& p : python_candidates()) {
    const int has = probe(p);
    if (has >= 0 && (package || (has & kHasPackage))) probed.emplace_back(p, has);
  }
  for (const int module : {kHasTorch, kHasNumpy, 0}) {
    for (const auto& [p, has] : probed)
      if (module == 0 || (has & module)) return p;
  }
  return "";
}

// The worker's environment: the package folder first on PYTHONPATH; nothing where the package
// is the interpreter's own.
std::vector<std::string> python_path(const std::string& dir) {
  if (dir.empty()) return {};
  const std::string old = env("PYTHONPATH");
  return {"PYTHONPATH=" + dir + (old.empty() ? "" : ":" + old)};
}

}  // namespace

PythonProviders load_python_providers(const PythonSetup& setup) {
  PythonProviders out;
  const std::string dir = package_dir();
  const std::string python = interpreter(setup, !dir.empty());
  if (python.empty()) {
    out.unavailable =
        dir.empty() ? "no python3 beside attnprof or on PATH imports the attnprof package (pip "
                      "install it, or set ATTNPROF_PYTHON_DIR to the repository's python/)"
                    : "no python3 on PATH (name one with --python or ATTNPROF_PYTHON)";
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
    ChildProcess child(argv, python_path(dir));
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
  group.env = python_path(dir);
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
