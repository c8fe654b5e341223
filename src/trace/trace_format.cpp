// The breakdown and roofline of a traced point as text: aligned plain text for the terminal,
// Markdown for --breakdown FILE.
#include <fmt/format.h>

#include "attnprof/trace.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

constexpr size_t kNameWidth = 96;  // kernel names beyond this are cut with "…"

std::string render(const Table& t, bool markdown) {
  return markdown ? render_markdown(t) : render_plain(t);
}

std::string per_launch(int64_t count, int launches) {
  if (launches <= 0) return "-";
  return count % launches == 0 ? fmt::format("{}", count / launches)
                               : fmt::format("{:.2f}", double(count) / launches);
}

std::string code(const std::string& s, bool markdown) {
  return markdown ? fmt::format("`{}`", s) : s;
}

}  // namespace

std::string render_breakdown(const Result& row, const Breakdown& b, bool markdown) {
  const PointTrace& t = trace_of(row);
  std::string out;
  if (t.device_events.empty()) {  // a CPU provider, or CUPTI was busy: nothing to break down
    return fmt::format("kernels: {}\n",
                       row.kernels_note.empty() ? "none traced" : row.kernels_note);
  }
  Table cats;
  cats.header = {"category", "events", "per launch", "total", "share"};
  cats.right = {false, true, true, true, true};
  for (const CategoryRow& r : b.categories) {
    cats.add({std::string(to_string(r.category)), std::to_string(r.count),
              per_launch(r.count, b.launches), format_duration_us(r.total_us),
              fmt::format("{:.1f}%", 100.0 * r.share)});
  }
  int64_t events = 0;
  for (const CategoryRow& r : b.categories) events += r.count;
  cats.add({"all", std::to_string(events), per_launch(events, b.launches),
            format_duration_us(b.total_us), b.total_us > 0 ? "100.0%" : "-"});
  out += render(cats, markdown);

  if (!b.kernels.empty()) {
    Table ks;
    ks.header = {"kernel", "category", "count", "total", "share"};
    ks.right = {false, false, true, true, true};
    for (const KernelRow& k : b.kernels) {
      ks.add({code(truncate_to_width(k.name, kNameWidth), markdown),
              std::string(to_string(k.category)), std::to_string(k.count),
              format_duration_us(k.total_us),
              fmt::format("{:.1f}%", b.total_us > 0 ? 100.0 * k.total_us / b.total_us : 0.0)});
    }
    out += '\n';
    out += render(ks, markdown);
  }
  if (!row.kernels_note.empty()) out += fmt::format("\nkernels: {}\n", row.kernels_note);
  for (const std::string& f : b.flags) out += fmt::format("{}flag: {}\n", markdown ? "- " : "", f);
  return out;
}

std::string render_roofline(const Roofline& r, const std::optional<Ceilings>& ceilings,
                            bool markdown) {
  std::string out;
  if (ceilings) {
    out += fmt::format("ceilings: {} TFLOP/s, {} TB/s, ridge {} FLOP/byte ({})\n",
                       format_sig3(ceilings->tflops), format_sig3(ceilings->tbps),
                       format_sig3(ceilings->ridge()), ceilings->source);
    if (markdown) out += "\n";
  }
  if (!r.placements.empty()) {
    Table t;
    t.header = {"placed",  "GFLOP", "MB (min)",      "FLOP/byte", "time",
                "TFLOP/s", "TB/s",  "% peak FLOP/s", "% peak BW", "bound"};
    t.right = {false, true, true, true, true, true, true, true, true, false};
    for (const RooflinePlacement& p : r.placements) {
      const bool known = !p.bound.empty();
      t.add({p.what, format_sig3(p.flops * 1e-9), format_sig3(p.bytes * 1e-6),
             format_sig3(p.intensity), format_duration_us(p.time_us), format_sig3(p.tflops),
             format_sig3(p.tbps), known ? fmt::format("{:.1f}%", p.pct_peak_flops) : "-",
             known ? fmt::format("{:.1f}%", p.pct_peak_bw) : "-", known ? p.bound : "-"});
    }
    out += render(t, markdown);
  }
  for (const std::string& n : r.notes) out += fmt::format("{}{}\n", markdown ? "- " : "note: ", n);
  return out;
}

}  // namespace attnprof
