// The CPU engine's ceilings (Engine::peaks_key, Engine::measure_peaks for DeviceKind::cpu).
#pragma once

#include <functional>
#include <string>

#include "attnprof/engine.hpp"
#include "attnprof/peaks.hpp"

namespace attnprof {

// The CPU, its threads and the BLAS library: what moves the figures.
std::string cpu_peaks_key(const Device& device);

// What the CPU providers can reach at best on `engine`'s threads, timed by its timer: one
// single-threaded sgemm (1024^3) per thread at once, the way cpu.naive and cpu.flash call BLAS
// (one BLAS thread, OpenMP over heads); a parallel read-only stream and a parallel copy over 256
// MiB, far beyond any cache.
Peaks measure_cpu_peaks(Engine& engine, const std::function<void(const std::string&)>& progress);

}  // namespace attnprof
