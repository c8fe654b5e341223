#include "attnprof/physics.hpp"

#include <fmt/format.h>

#include "attnprof/engine.hpp"
#include "attnprof/model.hpp"

namespace attnprof {

namespace {

constexpr double kGpuMargin = 1.03;
constexpr double kUnknownMargin = 1.5;
constexpr double kCpuMargin = 3.0;
constexpr double kRecomputeSlack = 1.25;  // 2.5x fwd by convention, 2.0x without recomputing P

// Dense FLOP per clock per SM of the tensor cores: 16-bit inputs (fp16/bf16 with fp32
// accumulation where the part has it; the faster fp16-accumulation rate otherwise), fp8 inputs.
// NVIDIA's architecture whitepapers (V100, T4, A100, GA10x, AD10x, H100, B200); 0: unknown.
struct SmRate {
  double f16 = 0, f8 = 0;
};
SmRate sm_rate(int cc_major, int cc_minor) {
  switch (cc_major) {
    case 7:
      return {cc_minor == 0 ? 1024.0 : 512.0, 0};
    case 8:
      if (cc_minor == 0) return {2048, 0};
      return {1024, cc_minor == 9 ? 2048.0 : 0.0};
    case 9:
      return {4096, 8192};
    case 10:
    case 12:
      return {8192, 16384};
    default:
      return {};
  }
}

}  // namespace

PhysicalLimits physical_limits(const Device& device, DType dtype,
                               const std::optional<Peaks>& peaks) {
  PhysicalLimits l;
  if (device.kind == DeviceKind::cpu) {
    if (peaks && peaks->fp32_tflops > 0) {
      l.tflops = kCpuMargin * peaks->fp32_tflops;
      l.tflops_basis = fmt::format("{:g}x the measured sgemm ceiling of {:.3g} TFLOP/s", kCpuMargin,
                                   peaks->fp32_tflops);
    }
    if (peaks && peaks->best_tbps() > 0) {
      l.tbps = kCpuMargin * peaks->best_tbps();
      l.tbps_basis = fmt::format("{:g}x the measured stream ceiling of {:.3g} TB/s", kCpuMargin,
                                 peaks->best_tbps());
    }
    return l;
  }
  const SmRate rate = sm_rate(device.cc_major, device.cc_minor);
  const double per_sm = is_fp8(dtype) && rate.f8 > 0 ? rate.f8 : rate.f16;
  if (per_sm > 0 && device.sm_count > 0 && device.clock_khz > 0) {
    l.tflops = per_sm * device.sm_count * device.clock_khz * 1e3 / 1e12;
    l.tflops_basis = fmt::format("{:g} FLOP per clock on each of {} SMs at {} MHz", per_sm,
                                 device.sm_count, device.clock_khz / 1000);
  } else if (peaks && peaks->tflops_for(dtype) > 0) {
    l.tflops = kUnknownMargin * peaks->tflops_for(dtype);
    l.tflops_basis = fmt::format("{:g}x the measured GEMM ceiling (sm_{}{} is not in the table)",
                                 kUnknownMargin, device.cc_major, device.cc_minor);
  }
  const Datasheet d = datasheet_for(device.name);
  if (d.known && d.hbm_tbps > 0) {
    l.tbps = d.hbm_tbps;
    l.tbps_basis = d.source;
  } else if (peaks && peaks->best_tbps() > 0) {
    l.tbps = kUnknownMargin * peaks->best_tbps();
    l.tbps_basis = fmt::format("{:g}x the measured bandwidth ceiling", kUnknownMargin);
  }
  return l;
}

std::string implausible_reason(const Result& r, const Device& device,
                               const std::optional<Peaks>& peaks) {
  const double t = r.timing.median_us * 1e-6;
  if (r.timing.samples > 0 && !(t > 0) && r.flops > 0) {
    return "the launches took no measurable time: the work ran where the timer does not see, or "
           "not at all";
  }
  if (!(t > 0)) return "";
  const PhysicalLimits l = physical_limits(device, r.spec.dtype, peaks);
  const bool gpu = device.kind == DeviceKind::cuda;
  const double margin = gpu ? kGpuMargin : 1.0;
  const double slack = r.spec.mode == Mode::fwd ? 1.0 : kRecomputeSlack;
  const double tflops = r.flops / t / 1e12;
  if (l.tflops > 0 && tflops > l.tflops * margin * slack) {
    return fmt::format(
        "{:.4g} TFLOP/s ({:.4g} us a launch) is more than this device can compute: {:.4g} TFLOP/s "
        "({}); the launch skipped work or ran it where the timer does not see",
        tflops, r.timing.median_us, l.tflops, l.tflops_basis);
  }
  const double tbps = r.bytes / t / 1e12;
  // Cold: the L2 was evicted before the sample, and each launch of a batch read a copy of its
  // own (a batch over one copy may find the previous launch's data in the L2).
  const bool cold = r.timing.mode == to_string(TimingMode::cold) &&
                    r.bytes > double(device.l2_bytes) &&
                    (r.timing.launches_per_sample == 1 || r.timing.copies > 1);
  if (gpu && cold && l.tbps > 0 && tbps > l.tbps * margin) {
    return fmt::format(
        "{:.4g} TB/s ({:.4g} us a launch) is more than this device's memory delivers to a cold "
        "working set of {:.3g} MB: {:.4g} TB/s ({}); the launch skipped reads or ran where the "
        "timer does not see",
        tbps, r.timing.median_us, r.bytes / 1e6, l.tbps, l.tbps_basis);
  }
  return "";
}

}  // namespace attnprof
