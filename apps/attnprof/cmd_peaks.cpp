// attnprof peaks: the device's measured ceilings beside its datasheet.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "commands.hpp"
#include "number_options.hpp"
#include "output_paths.hpp"

#if defined(ATTNPROF_WITH_CUDA)
#include "attnprof/engine.hpp"
#include "attnprof/peaks.hpp"
#endif

namespace attnprof {

#if defined(ATTNPROF_WITH_CUDA)
namespace {

std::string get(const Fingerprint& env, const char* key) {
  auto it = env.find(key);
  return it == env.end() ? "?" : it->second;
}

// One table row: the figure, the datasheet's, their ratio, and "impossible" only above it.
void print_row(const char* what, double measured, double datasheet, const char* unit,
               int decimals) {
  std::string sheet = "-", ratio = "", flag = "";
  if (datasheet > 0) {
    sheet = fmt::format("{:.{}f} {}", datasheet, decimals, unit);
    ratio = fmt::format("{:.1f}%", 100.0 * measured / datasheet);
    if (measured > datasheet) flag = "impossible: above the datasheet";
  }
  fmt::print("{:<34} {:>16} {:>16} {:>8}  {}\n", what,
             fmt::format("{:.{}f} {}", measured, decimals, unit), sheet, ratio, flag);
}

void print_peaks(const Peaks& p, const Device& d) {
  const Datasheet ds = datasheet_for(p.device);
  fmt::print(
      "attnprof peaks: {} ({} SMs, CC {}.{}, {:.1f} GiB, L2 {} MiB; driver {}, CUDA {}, "
      "cuBLAS {})\n",
      p.device, d.sm_count, d.cc_major, d.cc_minor,
      static_cast<double>(d.memory_bytes) / double(int64_t{1} << 30), d.l2_bytes >> 20,
      get(p.env, "driver"), get(p.env, "cuda_runtime"), get(p.env, "cublas"));
  fmt::print("{:<34} {:>16} {:>16} {:>8}\n", "figure", "measured", "datasheet", "ratio");
  print_row("bf16 GEMM 8192^3, fp32 accumulate", p.bf16_tflops, ds.bf16_tflops, "TFLOP/s", 1);
  print_row("fp16 GEMM 8192^3, fp32 accumulate", p.fp16_tflops, ds.fp16_tflops, "TFLOP/s", 1);
  print_row("tf32 GEMM 8192^3, fp32 accumulate", p.tf32_tflops, ds.tf32_tflops, "TFLOP/s", 1);
  print_row("device copy 1 GiB (read + write)", p.copy_tbps, ds.hbm_tbps, "TB/s", 3);
  print_row("read-only stream 1 GiB", p.read_tbps, ds.hbm_tbps, "TB/s", 3);
  if (p.best_tbps() > 0) {
    fmt::print(
        "ridge point: {:.0f} FLOP/byte in bf16, {:.0f} in tf32 (best bandwidth {:.3f} TB/s)\n",
        p.bf16_tflops / p.best_tbps(), p.tf32_tflops / p.best_tbps(), p.best_tbps());
  }
  if (ds.known) fmt::print("datasheet: {} (dense)\n", ds.source);
}

}  // namespace
#endif

int cmd_peaks(const PeaksCommandOptions& options) {
  cli::check_output_paths({{"--json", options.json_out}});  // throws: a usage error in main()
#if defined(ATTNPROF_WITH_CUDA)
  try {
    std::unique_ptr<Engine> engine = make_cuda_engine(options.device);
    if (Availability a = engine->availability(); !a.available) {
      fmt::print(stderr, "attnprof peaks: {}\n", a.reason);
      return cli::kUsageExit;  // refused: no device to measure
    }
    std::optional<Peaks> peaks =
        options.refresh ? std::nullopt : load_cached_peaks(engine->device());
    std::string origin;
    if (peaks) {
      origin = fmt::format("from the cache {} (measured {}; --refresh measures again)",
                           peaks_cache_path(peaks->key), peaks->measured_at);
    } else {
      peaks = measure_peaks(*engine,
                            [](const std::string& line) { fmt::print(stderr, "  {}\n", line); });
      const std::string path = save_peaks(*peaks);
      origin = path.empty() ? fmt::format("measured {} (not cached: no writable cache folder)",
                                          peaks->measured_at)
                            : fmt::format("measured {}, cached in {}", peaks->measured_at, path);
    }
    print_peaks(*peaks, engine->device());
    fmt::print("{}\n", origin);
    if (!options.json_out.empty()) {
      std::ofstream out(options.json_out);
      out << to_json(*peaks);
      if (!out) {
        fmt::print(stderr, "attnprof peaks: cannot write --json {}\n", options.json_out);
        return cli::kFailedExit;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnprof peaks: {}\n", e.what());
    return cli::kFailedExit;
  }
#else
  (void)options;
  fmt::print(stderr, "attnprof peaks: this build has no CUDA engine (built without CUDA)\n");
  return cli::kUsageExit;  // refused: nothing to measure with
#endif
}

}  // namespace attnprof

namespace attnprof::cli {

Command add_peaks_command(CLI::App& app) {
  auto options = std::make_shared<PeaksCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "peaks",
      "Measured ceilings of this device: cuBLAS bf16/fp16/tf32 GEMM, device copy and a "
      "read-only stream, beside the datasheet (cached per device and driver)");
  add_whole_number_option(sub, "--device", options->device, "CUDA device index (0)", 0);
  sub->add_flag("--refresh", options->refresh, "Measure again even when cached figures exist");
  sub->add_option("--json", options->json_out, "Also write the figures to this JSON file");
  return {sub, [options] { return cmd_peaks(*options); }};
}

}  // namespace attnprof::cli
