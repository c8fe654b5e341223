#include "measure/host_load.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace attnprof {

CpuTimes read_cpu_times() {
  CpuTimes t;
  {
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice
    std::ifstream in("/proc/stat");
    std::string label;
    uint64_t v[8] = {};
    if (in >> label && label == "cpu") {
      for (uint64_t& x : v) in >> x;
      const uint64_t idle = v[3] + v[4];
      for (uint64_t x : v) t.host_total += x;
      t.host_busy = t.host_total - idle;
    }
  }
  {
    // Fields 14 and 15 (utime, stime) follow the command name, which may hold spaces: parse
    // after its closing parenthesis.
    std::ifstream in("/proc/self/stat");
    std::string line;
    if (std::getline(in, line)) {
      const std::size_t close = line.rfind(')');
      if (close != std::string::npos) {
        std::istringstream rest(line.substr(close + 2));
        std::string field;
        uint64_t utime = 0, stime = 0;
        for (int i = 3; i <= 15 && rest >> field; ++i) {
          if (i == 14) utime = std::stoull(field);
          if (i == 15) stime = std::stoull(field);
        }
        t.self = utime + stime;
      }
    }
  }
  return t;
}

double others_busy_share(const CpuTimes& a, const CpuTimes& b) {
  if (b.host_total <= a.host_total) return 0;
  const double total = static_cast<double>(b.host_total - a.host_total);
  const double busy = static_cast<double>(b.host_busy - a.host_busy);
  const double self = static_cast<double>(b.self - a.self);
  return std::clamp((busy - self) / total, 0.0, 1.0);
}

double load_average_1m() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return in ? load : 0;
}

}  // namespace attnprof
