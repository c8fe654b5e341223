// How busy the host was while a CPU point was sampled (docs/method.md, "A busy host"). CPU
// timings taken while other processes run (a build in the background) converge to wrong medians
// with tiny reported noise: the stopping rule sees steady samples of a slower machine. The CPU
// engine records the share of the host's CPU time other processes used and flags the row noisy.
#pragma once

#include <cstdint>

namespace attnprof {

// Others used more than this share of the host's CPU time while the point was sampled: noisy.
inline constexpr double kBusyHost = 0.10;

// Cumulative CPU time, in clock ticks: the whole host's busy and total time (/proc/stat) and
// this process's (all threads, /proc/self/stat). Zeros where unreadable.
struct CpuTimes {
  uint64_t host_busy = 0, host_total = 0, self = 0;
};
CpuTimes read_cpu_times();

// The share of the host's CPU time between `a` and `b` that other processes used, in [0, 1];
// 0 when nothing was read.
double others_busy_share(const CpuTimes& a, const CpuTimes& b);

// /proc/loadavg's 1-minute figure; 0 where unreadable.
double load_average_1m();

}  // namespace attnprof
