#include "measure_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "attnprof/parse_units.hpp"
#include "attnprof/provider_settings.hpp"
#include "grid_options.hpp"
#include "number_options.hpp"

namespace attnprof::cli {

void add_measure_options(CLI::App* sub, MeasureCliOptions& o) {
  add_whole_number_option(sub, "--seed", o.seed, "Seed of the random inputs (0 to 2^64-1)", 0);
  sub->add_option("--timing", o.timing, "CUDA timing: cold (L2 flushed), hot, graph, wall")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return parse_timing_mode(v)
                       ? std::string()
                       : fmt::format("'{}' is not one of {}", v, kTimingModeChoices);
          },
          "TIMING"));
  sub->add_option("--clock", o.clock,
                  "CUDA samples back to back (sustained: a loaded pipeline's clock) or after an "
                  "idle gap that lets a power-capped clock recover (recover: one launch with "
                  "gaps, as Nsight Compute sees it)")
      ->check(CLI::IsMember({"sustained", "recover"}));
  sub->add_option(
      "--max-noise", o.max_noise,
      fmt::format("Stop once the median's relative noise is below this ({})", o.max_noise));
  sub->add_option("--min-time", o.min_time,
                  fmt::format("Measured time before stopping may happen ({})", o.min_time));
  sub->add_option("--point-timeout", o.point_timeout,
                  fmt::format("Measurement time limit per point ({}); the row is flagged noisy",
                              o.point_timeout));
  add_whole_number_option(sub, "--min-samples", o.min_samples,
                          fmt::format("Fewest samples per point ({})", o.min_samples), 1);
  add_whole_number_option(sub, "--warmup", o.warmup, "Untimed launches before sampling (1)", 0);
  add_whole_number_option(sub, "--threads", o.threads,
                          "CPU threads for CPU providers (default: all)", 0);
  sub->add_flag("--no-trace", o.no_trace, "Do not record which kernels ran");
  sub->add_flag("--no-auto-peaks", o.no_auto_peaks,
                "Without cached ceilings of the device (GPU or CPU), do not measure them before "
                "the first point (rows then carry no % of peak, and the check that no figure "
                "beats the device has only what is known without them)");
  sub->add_option("--verify", o.verify,
                  "auto: GPU points check every row on the device, CPU points every row within "
                  "about a second of fp64 and a sample beyond; full: CPU points check every row "
                  "whatever it costs")
      ->check(CLI::IsMember({"auto", "full"}));
  add_settings_option(sub, o.settings);
  add_whole_number_option(
      sub, "--verify-repeats", o.verify_repeats,
      o.verify_repeats < 0
          ? std::string("Launches checked after the last timed one (default: "
                        "up to 10 on a GPU while checks are cheap, none on "
                        "the CPU)")
          : fmt::format("Launches checked after the last timed one ({})", o.verify_repeats),
      0);
}

void add_settings_option(CLI::App* sub, std::vector<std::string>& settings) {
  sub->add_option("--set", settings,
                  "A provider setting, PROVIDER.NAME=VALUE[,VALUE...] (repeatable; `attnprof list` "
                  "shows each provider's); several values are swept like an axis; recorded in "
                  "every row of that provider")
      ->take_all();
}

void check_setting_forms(const std::vector<std::string>& settings) {
  for (const std::string& s : settings) parse_setting_assignment(s);
}

RunOptions measure_run_options(const MeasureCliOptions& o) {
  check_setting_forms(o.settings);
  RunOptions ro;
  ro.seed = o.seed;
  ro.measure.mode = *parse_timing_mode(o.timing);   // CLI11 checked the choices
  ro.measure.clock = *parse_clock_policy(o.clock);  // CLI11 checked the choices
  ro.measure.rule.max_noise = parse_fraction_option(o.max_noise, "--max-noise");
  ro.measure.rule.min_time_s = positive_seconds_option(o.min_time, "--min-time");
  ro.measure.rule.timeout_s = positive_seconds_option(o.point_timeout, "--point-timeout");
  ro.measure.rule.min_samples = o.min_samples;
  ro.warmup_launches = o.warmup;
  ro.trace_kernels = !o.no_trace;
  ro.verify.full = o.verify == "full";
  ro.verify.repeats = o.verify_repeats;
  ro.auto_peaks = o.no_auto_peaks ? AutoPeaks::off : AutoPeaks::any;
  return ro;
}

void warn_cuda_only_options(const MeasureCliOptions& o, const std::vector<Provider*>& providers) {
  const MeasureCliOptions defaults;
  std::vector<std::string> given;
  if (o.timing != defaults.timing) given.push_back("--timing " + o.timing);
  if (o.clock != defaults.clock) given.push_back("--clock " + o.clock);
  const bool any_cuda = std::any_of(providers.begin(), providers.end(), [](const Provider* p) {
    return p->device_kind() == DeviceKind::cuda;
  });
  if (given.empty() || any_cuda) return;
  fmt::print(stderr,
             "attnprof: warning: {} time{} CUDA points only; this run has none (CPU points are "
             "timed by the host clock around each launch): ignored\n",
             fmt::join(given, " and "), given.size() == 1 ? "s" : "");
}

namespace {
constexpr double kMaxSeconds = 86400;
}  // namespace

double positive_seconds_option(const std::string& text, const char* option) {
  double s = 0;
  try {
    s = parse_seconds(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", option, e.what()));
  }
  if (!(s > 0)) {
    throw std::invalid_argument(fmt::format("{}: must be > 0 (got '{}')", option, text));
  }
  // A day is more than any point, tune or hang limit needs, and far from where a deadline in
  // nanoseconds overflows (2e9 s was once taken and ended a healthy point at once).
  if (s > kMaxSeconds) {
    throw std::invalid_argument(
        fmt::format("{}: at most {:.0f} s, a day (got '{}')", option, kMaxSeconds, text));
  }
  return s;
}

}  // namespace attnprof::cli
