// attnprof peaks: the device's measured ceilings beside its datasheet (a GPU), or the CPU's.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "attnprof/engine.hpp"
#include "attnprof/peaks.hpp"
#include "commands.hpp"
#include "number_options.hpp"
#include "output_paths.hpp"

namespace attnprof {

namespace {

std::string get(const Fingerprint& env, const char* key) {
  auto it = env.find(key);
  return it == env.end() ? "?" : it->second;
}

// One table row: the figure, the datasheet's, their ratio, the SM clock it was measured at (a
// GEMM's; 0: none shown), and "impossible" only above the datasheet.
void print_row(const char* what, double measured, double datasheet, const char* unit, int decimals,
               double clock_mhz = 0) {
  std::string sheet = "-", ratio = "", flag = "";
  if (datasheet > 0) {
    sheet = fmt::format("{:.{}f} {}", datasheet, decimals, unit);
    ratio = fmt::format("{:.1f}%", 100.0 * measured / datasheet);
    if (measured > datasheet) flag = "impossible: above the datasheet";
  }
  const std::string clock = clock_mhz > 0 ? fmt::format("{:.0f} MHz", clock_mhz) : "";
  fmt::print("{:<34} {:>16} {:>16} {:>8} {:>9}  {}\n", what,
             fmt::format("{:.{}f} {}", measured, decimals, unit), sheet, ratio, clock, flag);
}

void print_gpu_peaks(const Peaks& p, const Device& d) {
  const Datasheet ds = datasheet_for(p.device);
  fmt::print(
      "attnprof peaks: {} ({} SMs, CC {}.{}, {:.1f} GiB, L2 {} MiB; driver {}, CUDA {}, "
      "cuBLAS {})\n",
      p.device, d.sm_count, d.cc_major, d.cc_minor,
      static_cast<double>(d.memory_bytes) / double(int64_t{1} << 30), d.l2_bytes >> 20,
      get(p.env, "driver"), get(p.env, "cuda_runtime"), get(p.env, "cublas"));
  fmt::print("{:<34} {:>16} {:>16} {:>8} {:>9}\n", "figure", "measured", "datasheet", "ratio",
             "SM clock");
  print_row("bf16 GEMM 8192^3, fp32 accumulate", p.bf16_tflops, ds.bf16_tflops, "TFLOP/s", 1,
            p.bf16_clock_mhz);
  print_row("fp16 GEMM 8192^3, fp32 accumulate", p.fp16_tflops, ds.fp16_tflops, "TFLOP/s", 1,
            p.fp16_clock_mhz);
  print_row("tf32 GEMM 8192^3, fp32 accumulate", p.tf32_tflops, ds.tf32_tflops, "TFLOP/s", 1,
            p.tf32_clock_mhz);
  if (p.fp8_tflops > 0) {
    print_row("fp8 e4m3 GEMM 8192^3, bf16 out", p.fp8_tflops, ds.fp8_tflops, "TFLOP/s", 1,
              p.fp8_clock_mhz);
  }
  print_row("device copy 1 GiB (read + write)", p.copy_tbps, ds.hbm_tbps, "TB/s", 3);
  print_row("read-only stream 1 GiB", p.read_tbps, ds.hbm_tbps, "TB/s", 3);
  if (p.best_tbps() > 0) {
    fmt::print(
        "ridge point: {:.0f} FLOP/byte in bf16, {:.0f} in tf32 (best bandwidth {:.3f} TB/s)\n",
        p.bf16_tflops / p.best_tbps(), p.tf32_tflops / p.best_tbps(), p.best_tbps());
  }
  if (ds.known) fmt::print("datasheet: {} (dense, at the boost clock)\n", ds.source);
  fmt::print(
      "rows give % of the measured ceiling, of it scaled to the row's own SM clock "
      "(pct_peak_flops_at_clock), and of the datasheet (pct_datasheet_flops)\n");
}

void print_cpu_peaks(const Peaks& p, const Device& d) {
  fmt::print("attnprof peaks: {} ({} threads, {:.1f} GiB; {})\n", p.device, d.threads,
             static_cast<double>(d.memory_bytes) / double(int64_t{1} << 30), get(p.env, "blas"));
  fmt::print("{:<44} {:>16}\n", "figure", "measured");
  fmt::print("{:<44} {:>16}\n", "fp32 sgemm 1024^3, one per thread at once",
             fmt::format("{:.1f} GFLOP/s", p.fp32_tflops * 1e3));
  fmt::print("{:<44} {:>16}\n", "copy 128 MiB (read + write)",
             fmt::format("{:.1f} GB/s", p.copy_tbps * 1e3));
  fmt::print("{:<44} {:>16}\n", "read-only stream 256 MiB",
             fmt::format("{:.1f} GB/s", p.read_tbps * 1e3));
  if (p.best_tbps() > 0) {
    fmt::print("ridge point: {:.1f} FLOP/byte (best bandwidth {:.1f} GB/s)\n",
               p.fp32_tflops / p.best_tbps(), p.best_tbps() * 1e3);
  }
}

// The engine the command measures, as `run` chooses its device: --device cuda a GPU (refused with
// the reason where there is none), cpu the CPU, auto the GPU where one answers, else the CPU.
std::unique_ptr<Engine> peaks_engine(const PeaksCommandOptions& options, std::string& refusal) {
  if (options.device == "cpu") return make_cpu_engine(0);
  std::unique_ptr<Engine> engine = make_cuda_engine(options.gpu);
  std::string why = engine ? engine->availability().reason
                           : std::string("this build has no CUDA engine (built without CUDA)");
  if (engine && engine->availability().available) return engine;
  if (options.device == "auto") return make_cpu_engine(0);
  refusal = "--device cuda: " + why + "; --device cpu measures the CPU";
  return nullptr;
}

}  // namespace

int cmd_peaks(const PeaksCommandOptions& options) {
  cli::check_output_paths({{"--json", options.json_out}}, {},
                          options.force);  // throws: a usage error in main()
  try {
    std::string refusal;
    std::unique_ptr<Engine> engine = peaks_engine(options, refusal);
    if (!engine) {
      fmt::print(stderr, "attnprof peaks: {}\n", refusal);
      return cli::kUsageExit;  // refused: no device to measure
    }
    const std::string key = engine->peaks_key();
    std::optional<Peaks> peaks = options.refresh ? std::nullopt : load_cached_peaks(key);
    std::string origin;
    if (peaks) {
      origin = fmt::format("from the cache {} (measured {}; --refresh measures again)",
                           peaks_cache_path(key), peaks->measured_at);
    } else {
      peaks = engine->measure_peaks(
          [](const std::string& line) { fmt::print(stderr, "  {}\n", line); });
      const std::string path = save_peaks(*peaks);
      origin = path.empty() ? fmt::format("measured {} (not cached: no writable cache folder)",
                                          peaks->measured_at)
                            : fmt::format("measured {}, cached in {}", peaks->measured_at, path);
      if (const std::string busy = busy_note(*peaks); !busy.empty()) origin += "; " + busy;
    }
    if (peaks->kind == DeviceKind::cpu) {
      print_cpu_peaks(*peaks, engine->device());
    } else {
      print_gpu_peaks(*peaks, engine->device());
    }
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
}

}  // namespace attnprof

namespace attnprof::cli {

Command add_peaks_command(CLI::App& app) {
  auto options = std::make_shared<PeaksCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "peaks",
      "Measured ceilings of this device: cuBLAS bf16/fp16/tf32 GEMM, device copy and a "
      "read-only stream, beside the datasheet (on the CPU: sgemm and host streams); cached per "
      "device, driver and libraries. run, tune and trace measure a GPU's when none are cached");
  sub->add_option("--device", options->device,
                  "auto (the GPU where one answers, else the CPU), cpu (what CPU rows are held "
                  "against once measured) or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  add_whole_number_option(sub, "--gpu", options->gpu, "CUDA device index (0)", 0);
  sub->add_flag("--refresh", options->refresh, "Measure again even when cached figures exist");
  sub->add_option("--json", options->json_out, "Also write the figures to this JSON file");
  sub->add_flag("--force", options->force, "Replace an existing --json file");
  return {sub, [options] { return cmd_peaks(*options); }};
}

}  // namespace attnprof::cli
