// Roofline placement of a traced point. The model knows the point's FLOPs (exact mask count)
// and its minimum bytes; it does not know how a provider splits that work among its kernels, so
// only the point and, where all matmul work provably ran inside them, the fused kernels are
// placed (docs/tracing.md, "Roofline").
#include <fmt/format.h>

#include "attnprof/model.hpp"
#include "attnprof/trace.hpp"

namespace attnprof {

namespace {

RooflinePlacement place(std::string what, double flops, double bytes, double time_us,
                        const std::optional<Ceilings>& c) {
  RooflinePlacement p;
  p.what = std::move(what);
  p.flops = flops;
  p.bytes = bytes;
  p.time_us = time_us;
  p.intensity = bytes > 0 ? flops / bytes : 0;
  if (time_us > 0) {
    p.tflops = flops / (time_us * 1e-6) / 1e12;
    p.tbps = bytes / (time_us * 1e-6) / 1e12;
  }
  if (c && c->tflops > 0 && c->tbps > 0) {
    p.pct_peak_flops = 100.0 * p.tflops / c->tflops;
    p.pct_peak_bw = 100.0 * p.tbps / c->tbps;
    p.bound = p.intensity >= c->ridge() ? "compute" : "memory";
  }
  return p;
}

}  // namespace

Roofline place_on_roofline(const Result& row, const Breakdown& b,
                           const std::optional<Ceilings>& ceilings) {
  const PointTrace& t = trace_of(row);
  Roofline r;
  if (row.status != Status::passed || b.launches <= 0) {
    r.notes.push_back("nothing to place: the point did not run its timed launches");
    return r;
  }
  const double flops_per_launch = flops(row.spec);
  const double bytes_per_launch = min_bytes(row.spec);
  // Device time per launch: the summed kernel time (gaps between kernels are host overhead, not
  // work). A CPU provider has no kernels: its timed range's wall time.
  double time_us = b.total_us / b.launches;
  std::string time_note = "kernel time per launch from the trace (hot, one run)";
  if (b.total_us <= 0) {
    for (const TraceEvent& range : t.ranges) {
      if (range.name == kPhaseTimed) time_us = range.duration_us() / b.launches;
    }
    time_note = "host wall time per launch (no kernels traced)";
  }
  r.placements.push_back(place("point", flops_per_launch, bytes_per_launch, time_us, ceilings));
  r.notes.push_back(fmt::format(
      "point: FLOPs {} ; bytes: minimum traffic ({}), so intensity is an upper bound; time: {}",
      kFlopConvention, kByteConvention, time_note));

  const CategoryRow& fused = b.row(KernelCategory::fused_attention);
  const CategoryRow& gemm = b.row(KernelCategory::gemm);
  if (fused.count > 0 && gemm.count == 0) {
    r.placements.push_back(place("fused attention kernels", flops_per_launch, bytes_per_launch,
                                 fused.total_us / b.launches, ceilings));
    r.notes.push_back(
        "fused attention kernels: no GEMM ran, so every matmul FLOP of the point is theirs; "
        "their bytes are the point's minimum (real traffic is at least that)");
  } else if (fused.count > 0) {
    r.notes.push_back(
        "fused attention kernels not placed: GEMM kernels ran too, so the point's FLOPs cannot be "
        "split between them from names alone");
  }
  if (gemm.count > 0) {
    r.notes.push_back(fmt::format(
        "{} GEMM kernel launch(es): per-kernel FLOPs unknown (the model counts the attention's "
        "visible pairs, not the unmasked products a provider's GEMMs compute)",
        gemm.count));
  }
  const int64_t rest = b.row(KernelCategory::softmax_reduction).count +
                       b.row(KernelCategory::elementwise_copy).count +
                       b.row(KernelCategory::other).count;
  if (rest > 0) {
    r.notes.push_back(fmt::format(
        "{} softmax/elementwise/other event(s): no FLOP or byte model per kernel; not placed",
        rest));
  }
  if (!ceilings) {
    r.notes.push_back("no ceilings for this device: achieved rates only, no bound");
  }
  return r;
}

}  // namespace attnprof
