#include "report/seeds.hpp"

#include <fmt/format.h>

#include <array>
#include <map>
#include <span>

#include "attnprof/registry.hpp"
#include "report/measured.hpp"
#include "report/series.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

constexpr std::array kSystems = {
    SeedSystem{"naive, PyTorch eager", "torch.naive"},
    SeedSystem{"SDPA, PyTorch's choice", "torch.sdpa.default,py.torch.sdpa,py.torch.sdpa.cpu"},
    SeedSystem{"SDPA, flash backend (FlashAttention-2 in ATen)",
               "torch.sdpa.flash,py.torch.sdpa.flash"},
    SeedSystem{"SDPA, efficient backend (xFormers' kernel in ATen)", "torch.sdpa.efficient"},
    SeedSystem{"SDPA, cuDNN backend", "torch.sdpa.cudnn"},
    SeedSystem{"SDPA, math backend", "torch.sdpa.math"},
    SeedSystem{"FlashAttention-2 (flash-attn)", "flash_attn.fa2"},
    SeedSystem{"xFormers", "xformers.memeff"},
    SeedSystem{"ONNX Runtime FP16", "ort.cuda.*,ort.cpu.*"},
    SeedSystem{"TensorRT FP16", "trt.fp16"},
    SeedSystem{"FlashInfer", "py.flashinfer.*"},
    SeedSystem{"FlashAttention-4", "py.fa4"},
    SeedSystem{"OpenVINO", "py.openvino.*"},
    SeedSystem{"JAX / XLA", "py.jax.*"},
};

bool stands_for(std::string_view globs, const std::string& provider) {
  for (std::size_t at = 0; at <= globs.size();) {
    const std::size_t comma = std::min(globs.find(',', at), globs.size());
    if (glob_match(globs.substr(at, comma - at), provider)) return true;
    at = comma + 1;
  }
  return false;
}

// Where a row was measured: its device, timing mode and spec.
std::string shape_of(const Result& r) {
  return fmt::format("{}|{}|{}", r.device, r.timing.mode, r.spec.key());
}

// Where a row that did not run would have: its device and spec.
std::string point_of(const Result& r) {
  return fmt::format("{}|{}", r.device, r.spec.key());
}

// The shape where the baseline and the most systems passed; the largest by FLOPs among equals.
const Result* reference_row(const std::vector<Result>& rows, const std::string& baseline) {
  std::map<std::string, std::vector<const Result*>> at;
  for (const Result& r : rows)
    if (passed_and_timed(r)) at[shape_of(r)].push_back(&r);
  const Result* best = nullptr;
  std::size_t best_count = 0;
  for (const auto& [shape, here] : at) {
    const Result* base = nullptr;
    std::size_t count = 0;
    for (const SeedSystem& s : kSystems) {
      count += std::any_of(here.begin(), here.end(),
                           [&](const Result* r) { return stands_for(s.providers, r->provider); });
    }
    for (const Result* r : here)
      if (r->provider == baseline) base = r;
    if (!baseline.empty() && !base) continue;
    const Result* anchor = base ? base : here.front();
    if (!best || count > best_count || (count == best_count && anchor->flops > best->flops)) {
      best = anchor;
      best_count = count;
    }
  }
  return best;
}

}  // namespace

std::span<const SeedSystem> seed_systems() {
  return kSystems;
}

TableSection seeds_table(const std::vector<Result>& rows, const std::string& baseline,
                         const ReportOptions& options) {
  TableSection s;
  s.heading = "The seeds' comparison";
  const Result* ref = reference_row(rows, baseline);
  if (!ref) return s;
  const Result* base = ref->provider == baseline ? ref : nullptr;
  s.intro = fmt::format(
      "Each system the seeds name at one reference shape, {} ({}, {}): the shape where {} and "
      "the most of these systems passed, the largest among equals. A system with several "
      "providers shows its fastest there; one without rows says why as `attnprof list` does on "
      "the machine that wrote this report.",
      ref->spec.label(), ref->device, ref->timing.mode,
      base ? fmt::format("naive ({})", baseline) : std::string("no naive baseline passed; "));
  s.table.header = {"system",  "provider",           "median",
                    "TFLOP/s", "speedup over naive", "peak memory (× naive's)",
                    "why not"};
  s.table.right = {false, false, true, true, true, true, false};
  const auto figures = [&](const std::string& system, const Result& r) {
    std::string memory = has_memory(r) ? format_bytes(double(r.memory.peak_bytes)) : "-";
    if (base && has_memory(r) && has_memory(*base) && &r != base) {
      memory += fmt::format(
          " ({})", format_times(double(r.memory.peak_bytes) / double(base->memory.peak_bytes)));
    }
    s.table.add(
        {system, r.provider, format_duration_us(r.timing.median_us), format_sig3(r.tflops),
         base && &r != base ? format_times(base->timing.median_us / r.timing.median_us) : "-",
         memory, &r == base ? "the baseline" : ""});
  };
  const auto none = [&](const std::string& system, const std::string& provider,
                        const std::string& why) {
    s.table.add({system, provider, "-", "-", "-", "-", why});
  };
  if (base) figures("naive (the baseline)", *base);
  for (const SeedSystem& sys : kSystems) {
    const std::string name(sys.name);
    const Result* best = nullptr;
    const Result* refused = nullptr;  // a row at the reference shape that did not pass
    int64_t elsewhere = 0;
    std::string ran_elsewhere;
    for (const Result& r : rows) {
      if (!stands_for(sys.providers, r.provider)) continue;
      if (passed_and_timed(r) && shape_of(r) == shape_of(*ref)) {
        if (!best || r.timing.median_us < best->timing.median_us) best = &r;
      } else if (!passed_and_timed(r) && point_of(r) == point_of(*ref)) {
        if (!refused) refused = &r;
      } else if (passed_and_timed(r)) {
        ++elsewhere;
        if (ran_elsewhere.empty()) ran_elsewhere = r.provider;
      }
    }
    if (best) {
      figures(name, *best);
    } else if (refused) {
      none(name, refused->provider,
           fmt::format("{}: {}", to_string(refused->status), one_line(refused->reason)));
    } else if (elsewhere > 0) {
      none(name, ran_elsewhere,
           fmt::format("not run at the reference shape (passed at {} other point{})", elsewhere,
                       elsewhere == 1 ? "" : "s"));
    } else {
      // Not in the rows: what `attnprof list` says here of its first provider (one for the
      // reference shape's device first).
      const CatalogEntry* listed = nullptr;
      for (const CatalogEntry& e : options.catalog) {
        if (!stands_for(sys.providers, e.name)) continue;
        const DeviceKind want = ref->traits.device;
        if (!listed || (e.device == want && listed->device != want)) listed = &e;
      }
      if (listed && !listed->availability.available) {
        none(name, listed->name, "unavailable: " + one_line(listed->availability.reason));
      } else if (listed) {
        none(name, listed->name,
             fmt::format("not in these rows (available here: --providers {})", listed->name));
      } else {
        none(name, "-",
             options.python_unavailable.empty()
                 ? std::string("not in these rows, nor listed by `attnprof list` here")
                 : "not in these rows; Python providers unavailable here: " +
                       one_line(options.python_unavailable));
      }
    }
  }
  return s;
}

}  // namespace attnprof
