// Nsight Compute as a child process: its command line, its CSV, and the table made of it.
#include "attnprof/ncu.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "attnprof/axes.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

// One CSV line into fields ("" quoted, "" inside quotes is a quote).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

std::optional<double> number(std::string text) {
  std::erase(text, ',');
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    return used == text.size() ? std::optional<double>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

double to_us(double v, std::string_view unit) {
  if (unit == "nsecond" || unit == "ns") return v * 1e-3;
  if (unit == "msecond" || unit == "ms") return v * 1e3;
  if (unit == "second" || unit == "s") return v * 1e6;
  return v;  // usecond
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string find_on_path(std::string_view name) {
  const char* path = std::getenv("PATH");
  if (!path || name.empty()) return "";
  std::string_view rest(path);
  while (true) {
    const size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir.push_back('.');
    const std::string candidate = dir + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

std::vector<NcuKernel> parse_ncu_csv(std::string_view text) {
  std::vector<NcuKernel> kernels;
  std::map<std::string, size_t> by_id;
  std::map<std::string, size_t> col;
  size_t columns = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty() || line.front() != '"') continue;
    std::vector<std::string> f = csv_fields(line);
    if (col.empty() || f.size() != columns) {
      if (f.size() > 1 && f[0] == "ID") {
        col.clear();
        for (size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
        columns = f.size();
        if (!col.count("Kernel Name") || !col.count("Metric Name") || !col.count("Metric Value"))
          col.clear();
      }
      continue;
    }
    const std::string& id = f[col["ID"]];
    auto [it, fresh] = by_id.try_emplace(id, kernels.size());
    if (fresh) {
      NcuKernel k;
      k.name = f[col["Kernel Name"]];
      k.category = categorize(k.name);
      kernels.push_back(std::move(k));
    }
    NcuKernel& k = kernels[it->second];
    const std::string& metric = f[col["Metric Name"]];
    const std::optional<double> v = number(f[col["Metric Value"]]);
    if (!v) continue;
    const std::string unit = col.count("Metric Unit") ? f[col["Metric Unit"]] : "";
    if (metric == kNcuDramMetric) k.dram_pct = *v;
    if (metric == kNcuTensorMetric) k.tensor_pct = *v;
    if (metric == kNcuTimeMetric) k.duration_us = to_us(*v, unit);
  }
  return kernels;
}

std::vector<std::string> ncu_command(const std::string& ncu,
                                     const std::vector<std::string>& target) {
  std::vector<std::string> cmd = {
      ncu,
      "--clock-control",
      "none",
      "--profile-from-start",
      "off",
      "--metrics",
      fmt::format("{},{},{}", kNcuDramMetric, kNcuTensorMetric, kNcuTimeMetric),
      "--csv"};
  cmd.insert(cmd.end(), target.begin(), target.end());
  return cmd;
}

std::vector<std::string> ncu_target_argv(const std::string& exe, const Spec& spec,
                                         const std::string& provider, const Settings& settings,
                                         uint64_t seed, int warmup) {
  std::vector<std::string> argv = {exe, "trace"};
  for (std::string& a : spec_argv(spec)) argv.push_back(std::move(a));
  for (std::string a :
       {std::string("--providers"), provider, std::string("--seed"), std::to_string(seed),
        std::string("--warmup"), std::to_string(warmup), std::string("--ncu-target")}) {
    argv.push_back(std::move(a));
  }
  for (const auto& [name, value] : settings) {
    argv.push_back("--set");
    argv.push_back(fmt::format("{}.{}={}", provider, name, value));
  }
  return argv;
}

NcuReport run_ncu(const std::vector<std::string>& command) {
  std::string line;
  for (const std::string& a : command) {
    if (!line.empty()) line += ' ';
    line += shell_quote(a);
  }
  line += " 2>&1";
  NcuReport report;
  FILE* pipe = ::popen(line.c_str(), "r");
  if (!pipe) {
    report.error = "could not start ncu";
    return report;
  }
  std::string output;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = ::pclose(pipe);
  report.kernels = parse_ncu_csv(output);
  if (report.kernels.empty()) {
    std::string last_error;
    size_t pos = 0;
    while ((pos = output.find("==ERROR==", pos)) != std::string::npos) {
      const size_t end = output.find('\n', pos);
      last_error = output.substr(pos, end == std::string::npos ? end : end - pos);
      pos = end == std::string::npos ? output.size() : end;
    }
    report.error = !last_error.empty() ? one_line(last_error)
                                       : fmt::format("ncu profiled no kernel (exit status {})",
                                                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return report;
}

std::string render_ncu(const NcuReport& report, bool markdown) {
  if (report.kernels.empty()) return fmt::format("ncu: {}\n", report.error);
  Table t;
  t.header = {"kernel (ncu, one launch)", "category", "time", "DRAM % peak", "tensor pipe %"};
  t.right = {false, false, true, true, true};
  double total = 0, dram = 0, tensor = 0, dram_t = 0, tensor_t = 0;
  auto pct = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.1f}%", *v) : std::string("-");
  };
  for (const NcuKernel& k : report.kernels) {
    const std::string name = truncate_to_width(k.name, 96);
    t.add({markdown ? fmt::format("`{}`", name) : name, std::string(to_string(k.category)),
           format_duration_us(k.duration_us), pct(k.dram_pct), pct(k.tensor_pct)});
    total += k.duration_us;
    if (k.dram_pct) {
      dram += *k.dram_pct * k.duration_us;
      dram_t += k.duration_us;
    }
    if (k.tensor_pct) {
      tensor += *k.tensor_pct * k.duration_us;
      tensor_t += k.duration_us;
    }
  }
  t.add({"all (time-weighted)", "", format_duration_us(total),
         dram_t > 0 ? fmt::format("{:.1f}%", dram / dram_t) : "-",
         tensor_t > 0 ? fmt::format("{:.1f}%", tensor / tensor_t) : "-"});
  return markdown ? render_markdown(t) : render_plain(t);
}

}  // namespace attnprof
