#include "report/plots.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace attnprof {

namespace {

// A private directory under the system's temporary directory, removed with its files.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "attnprof-plot-XXXXXX").string();
    if (!mkdtemp(templ.data())) {
      throw std::runtime_error(
          fmt::format("cannot create a temporary directory for plots: {}", std::strerror(errno)));
    }
    path_ = templ;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv with stdin from /dev/null and stdout + stderr into `log`. Returns the exit status,
// or -1 with errno's text in `error` when the program could not be started.
int run_program(const std::vector<std::string>& args, const std::filesystem::path& log,
                std::string& error) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  error = fmt::format("killed by signal {}", WTERMSIG(status));
  return -1;
}

// A gnuplot single-quoted string: no escapes are processed, a quote is written twice.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    if (c != '\n' && c != '\r') out += c;
  }
  return out + "'";
}

std::string first_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t^") != std::string::npos) return line;
  }
  return "no output";
}

}  // namespace

std::string palette_color(int index) {
  // Okabe-Ito, then Tableau's remaining hues: distinguishable with the common colour deficiencies.
  static constexpr std::array<const char*, 10> kPalette = {
      "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00",
      "#56b4e9", "#000000", "#8c564b", "#7f7f7f", "#bcbd22"};
  return kPalette[static_cast<std::size_t>(std::abs(index)) % kPalette.size()];
}

Plotter find_plotter() {
  Plotter p;
  const char* env = std::getenv("ATTNPROF_GNUPLOT");
  p.program = env && *env ? env : "gnuplot";
  TempDir dir;
  std::string error;
  const int rc = run_program({p.program, "--version"}, dir.path() / "version.txt", error);
  if (rc != 0) {
    p.reason = fmt::format(
        "{} could not be run ({}); install gnuplot (Debian: gnuplot-nox) or "
        "set ATTNPROF_GNUPLOT",
        p.program, rc < 0 ? error : fmt::format("exit status {}", rc));
    return p;
  }
  p.available = true;
  p.version = first_line(read_file(dir.path() / "version.txt"));
  return p;
}

std::string gnuplot_script(const PlotSpec& plot, const std::string& svg_path) {
  std::string s;
  s += fmt::format(
      "set terminal svg size {},{} dynamic noenhanced font 'sans,12' background rgb 'white'\n",
      plot.width, plot.height);
  s += "set output " + quoted(svg_path) + "\n";
  s += "set title " + quoted(plot.title) + "\n";
  s += "set xlabel " + quoted(plot.x_label) + "\n";
  s += "set ylabel " + quoted(plot.y_label) + "\n";
  if (plot.log_x) s += "set logscale x 2\n";
  s += plot.log_y ? "set logscale y 10\n" : "set yrange [0:*]\n";
  s += "set format x '%g'\nset format y '%g'\n";
  s += "set grid xtics ytics mytics lc rgb '#dddddd'\n";
  s += plot.key_right ? "set key outside right top vertical\n"
                      : "set key outside below horizontal\n";
  s += "set border 3\nset tics nomirror\n";
  // Room at the sides for the end points; none in y, where log autoscaling already rounds out
  // to whole decades.
  s += "set offsets graph 0.02, graph 0.02, 0, 0\n";
  std::vector<std::string> plots;
  for (std::size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& series = plot.series[i];
    std::string block;
    for (const auto& [x, y] : series.points) {
      const bool shown =
          std::isfinite(x) && std::isfinite(y) && (!plot.log_x || x > 0) && (!plot.log_y || y > 0);
      if (shown) block += fmt::format("{} {}\n", x, y);
    }
    if (block.empty()) continue;
    s += fmt::format("$d{} << EOD\n{}EOD\n", i, block);
    const std::string color =
        series.style == PlotStyle::ceiling ? "#555555" : palette_color(series.color);
    // Past the palette's ten colours the marker changes (circle, square, triangle, diamond), so
    // an eleventh provider never looks like the first.
    static constexpr std::array<int, 4> kMarkers = {7, 5, 9, 13};
    const int marker = kMarkers[static_cast<std::size_t>(std::abs(series.color) / 10) % 4];
    const std::string style =
        series.style == PlotStyle::points    ? fmt::format("points pt {} ps 0.8", marker)
        : series.style == PlotStyle::ceiling ? std::string("lines dt 2 lw 2")
                                             : fmt::format("linespoints lw 2 pt {} ps 0.7", marker);
    plots.push_back(
        fmt::format("$d{} with {} lc rgb '{}' title {}", i, style, color, quoted(series.name)));
  }
  if (plot.reference_y) {
    plots.push_back(
        fmt::format("{} with lines dt 2 lw 1 lc rgb '#555555' notitle", *plot.reference_y));
  }
  if (plots.empty()) plots.emplace_back("NaN notitle");
  s += "plot ";
  for (std::size_t i = 0; i < plots.size(); ++i) s += (i ? ", \\\n     " : "") + plots[i];
  return s + "\n";
}

std::string render_svg(const Plotter& plotter, const PlotSpec& plot) {
  if (!plotter.available) throw std::runtime_error(plotter.reason);
  TempDir dir;
  const std::filesystem::path script = dir.path() / "plot.gp";
  const std::filesystem::path svg = dir.path() / "plot.svg";
  const std::filesystem::path log = dir.path() / "gnuplot.log";
  {
    std::ofstream out(script, std::ios::binary);
    out << gnuplot_script(plot, svg.string());
    if (!out) throw std::runtime_error("cannot write the gnuplot script in " + dir.path().string());
  }
  std::string error;
  const int rc = run_program({plotter.program, script.string()}, log, error);
  if (rc != 0) {
    throw std::runtime_error(fmt::format("{} failed on '{}': {}", plotter.program, plot.title,
                                         rc < 0 ? error : first_line(read_file(log))));
  }
  std::string text = read_file(svg);
  if (text.find("<svg") == std::string::npos) {
    throw std::runtime_error(fmt::format("{} wrote no SVG for '{}'", plotter.program, plot.title));
  }
  return text;
}

}  // namespace attnprof
