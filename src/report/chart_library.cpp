// Finding the charting library the HTML report inlines (report.hpp find_chart_library).
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "attnprof/command_line.hpp"
#include "attnprof/report.hpp"

namespace attnprof {

namespace {

namespace fs = std::filesystem;

// Debian's libjs-chart.js (Chart.js 3.9.1 in Debian 12); a later package may carry chart.umd.js.
constexpr const char* kDebianDir = "/usr/share/javascript/chart.js";
constexpr const char* kInstallName = "chart.min.js";

// The places looked at, in order, when $ATTNPROF_CHARTJS is not set.
std::vector<fs::path> candidates() {
  std::vector<fs::path> out;
  if (const fs::path exe = this_executable(); !exe.empty())
    out.push_back(exe.parent_path().parent_path() / "share" / "attnprof" / kInstallName);
#ifdef ATTNPROF_BUILD_CHARTJS
  out.emplace_back(ATTNPROF_BUILD_CHARTJS);
#endif
  for (const char* name : {"chart.umd.js", "chart.min.js"})
    out.push_back(fs::path(kDebianDir) / name);
  return out;
}

// The library at `path`, or why it cannot be the page's: unreadable, not Chart.js 3 or 4 (its
// banner names the version), or holding text that would end the page's <script> early.
ChartLibrary load(const fs::path& path) {
  ChartLibrary lib;
  lib.path = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    lib.reason = fmt::format("{} cannot be read", path.string());
    return lib;
  }
  std::ostringstream text;
  text << in.rdbuf();
  lib.script = text.str();
  const std::string head = lib.script.substr(0, 400);
  const std::size_t at = head.find("Chart.js v");
  if (at == std::string::npos) {
    lib.reason = fmt::format("{} is not Chart.js (no 'Chart.js v' banner)", path.string());
  } else {
    lib.version = head.substr(at + 10, head.find_first_of(" \n\r*", at + 10) - at - 10);
    if (!lib.version.starts_with("3.") && !lib.version.starts_with("4.")) {
      lib.reason =
          fmt::format("{} is Chart.js {}; the report needs 3 or 4", path.string(), lib.version);
    } else if (lib.script.find("</script") != std::string::npos) {
      lib.reason = fmt::format("{} holds '</script', which would end the page's script early",
                               path.string());
    } else {
      lib.found = true;
    }
  }
  if (!lib.found) lib.script.clear();
  return lib;
}

}  // namespace

ChartLibrary find_chart_library() {
  if (const char* env = std::getenv("ATTNPROF_CHARTJS"); env && *env) {
    ChartLibrary lib = load(env);
    if (!lib.found) {
      lib.reason = fmt::format(
          "ATTNPROF_CHARTJS: {}; point it at Chart.js 3 or 4 (chart.umd.js, or chart.min.js of "
          "apt-get install libjs-chart.js) or unset it",
          lib.reason);
    }
    return lib;
  }
  std::vector<std::string> looked;
  for (const fs::path& p : candidates()) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      looked.push_back(p.string());
      continue;
    }
    ChartLibrary lib = load(p);
    if (lib.found) return lib;
    looked.push_back(lib.reason);
  }
  ChartLibrary none;
  none.reason = fmt::format(
      "no Chart.js found (looked at {}); install it: apt-get install libjs-chart.js (Debian, "
      "Ubuntu), or set ATTNPROF_CHARTJS to Chart.js 3 or 4's chart.umd.js",
      fmt::join(looked, ", "));
  return none;
}

}  // namespace attnprof
