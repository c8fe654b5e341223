// Measurement options shared by the subcommands that measure points (run, tune): seed, timing
// mode, stopping rule, warm-up, CPU threads and kernel tracing, registered and checked once.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "attnprof/runner.hpp"

namespace attnprof::cli {

struct MeasureCliOptions {
  uint64_t seed = 20261129;
  std::string timing = "cold";
  std::string clock = "sustained";
  std::string max_noise = "0.5%";
  std::string min_time = "100ms";
  std::string point_timeout = "2s";
  int64_t min_samples = 10;
  int warmup = 1;
  int threads = 0;  // 0: every hardware thread
  bool no_trace = false;
  std::string verify = "auto";
  int verify_repeats = -1;  // -1: the engine's choice
  bool no_auto_peaks = false;
  std::vector<std::string> settings;  // --set PROVIDER.NAME=VALUE (provider_settings.hpp)
};

// Registers --seed, --timing, --clock, --max-noise, --min-time, --point-timeout, --min-samples,
// --warmup, --threads, --no-trace, --verify, --verify-repeats, --no-auto-peaks and --set.
void add_measure_options(CLI::App* sub, MeasureCliOptions& o);

// The run options they give (threads are the engine's to resolve), after applying and checking
// the provider settings; throws std::invalid_argument naming the option and what is allowed.
RunOptions measure_run_options(const MeasureCliOptions& o);

// --timing and --clock time CUDA points only: given to a run with no CUDA provider, they would
// change nothing, and one line says so (the CPU is timed by the host clock, `cpu-wall`).
void warn_cuda_only_options(const MeasureCliOptions& o, const std::vector<Provider*>& providers);

// A duration with units that must be > 0 ("250us", "2s"); throws naming `option`.
double positive_seconds_option(const std::string& text, const char* option);

}  // namespace attnprof::cli

namespace attnprof::cli {
// Registers --set on a subcommand (run and tune through add_measure_options; trace on its own).
void add_settings_option(CLI::App* sub, std::vector<std::string>& settings);
// Checks each --set's form, PROVIDER.NAME=VALUE[,VALUE...] (provider_settings.hpp), before any
// work; its names and values are checked against the providers (settings_of_run).
void check_setting_forms(const std::vector<std::string>& settings);
}  // namespace attnprof::cli
