// CSV export: one flat row per Result, columns listed in docs/results.md; the spec's columns come
// from the axis table (spec_columns.hpp).
// Quoting follows RFC 4180 (fields holding a comma, quote, CR or LF are quoted, quotes doubled);
// lines end in LF. Doubles use the shortest text that reads back to the same value; a value
// that was not measured (see measured.hpp) is an empty cell.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "attnprof/sink.hpp"
#include "report/measured.hpp"
#include "report/spec_columns.hpp"

namespace attnprof {
namespace {

std::string quote(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

// Builds one line, separating cells with commas.
class Row {
 public:
  Row& text(std::string_view s) { return cell(quote(s)); }
  Row& integer(int64_t v) { return cell(fmt::format("{}", v)); }
  Row& number(double v) { return cell(fmt::format("{}", v)); }  // "nan", "inf", "-inf"
  Row& boolean(bool v) { return cell(v ? "true" : "false"); }
  Row& blank() { return cell(""); }
  // The value when `present`, else a blank cell.
  Row& integer_if(bool present, int64_t v) { return present ? integer(v) : blank(); }
  Row& number_if(bool present, double v) { return present ? number(v) : blank(); }
  Row& number_if(const std::optional<double>& v) { return v ? number(*v) : blank(); }
  Row& integer_if(const std::optional<uint64_t>& v) {
    return v ? cell(fmt::format("{}", *v)) : blank();
  }

  std::string str() && { return std::move(line_); }

 private:
  Row& cell(std::string_view s) {
    if (!first_) line_ += ',';
    first_ = false;
    line_ += s;
    return *this;
  }
  std::string line_;
  bool first_ = true;
};

class CsvSink final : public Sink {
 public:
  explicit CsvSink(const std::filesystem::path& path)
      : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
    if (!out_) {
      throw std::runtime_error(
          fmt::format("cannot write CSV {}: {}", path.string(), std::strerror(errno)));
    }
    put(csv_header());
  }
  void write(const Result& r) override { put(to_csv_row(r)); }
  void end() override { out_.flush(); }

 private:
  // Flushed per row, like the journal: a killed sweep leaves every finished row readable.
  void put(const std::string& line) {
    out_ << line << '\n';
    out_.flush();
    if (!out_) throw std::runtime_error(fmt::format("cannot write CSV {}", path_.string()));
  }
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace

std::string csv_header() {
  std::string spec;
  for (const Axis* a : spec_axes()) spec += std::string(a->json) + ",";
  return "provider,status,reason," + spec +
         "timing_mode,median_us,p5_us,p95_us,cv,samples,noisy,tflops,gbps,tokens_per_s,"
         "pct_peak_flops,pct_peak_bw,bound,peak_bytes,extra_bytes,analytic_bytes,rel_l2_err,"
         "max_abs_err,tolerance,kernels,device,seed,fault,clock_policy,clock_mhz,power_w,"
         "rows_checked,rows_total,verify_s";
}

std::string to_csv_row(const Result& r) {
  const Spec& s = r.spec;
  const bool timed = has_timing(r);
  const bool verified = has_verify(r);
  const bool memory = has_memory(r);
  std::string kernels;
  for (const KernelRecord& k : r.kernels) {
    if (!kernels.empty()) kernels += ';';
    kernels += k.name;
  }
  Row row;
  row.text(r.provider).text(to_string(r.status)).text(r.reason);
  for (const Axis* a : spec_axes()) row.text(spec_cell(*a, s));
  row.text(r.timing.mode);
  row.number_if(timed, r.timing.median_us)
      .number_if(timed, r.timing.p5_us)
      .number_if(timed, r.timing.p95_us)
      .number_if(timed, r.timing.cv)
      .integer_if(timed, r.timing.samples);
  if (timed) {
    row.boolean(r.timing.noisy);
  } else {
    row.blank();
  }
  row.number_if(timed, r.tflops).number_if(timed, r.gbps).number_if(timed, r.tokens_per_s);
  row.number_if(r.pct_peak_flops).number_if(r.pct_peak_bw);
  row.text(r.bound);
  row.integer_if(memory, r.memory.peak_bytes)
      .integer_if(memory, r.memory.extra_bytes)
      .integer_if(r.memory.analytic_bytes > 0, r.memory.analytic_bytes);
  row.number_if(verified, r.verify.rel_l2_err)
      .number_if(verified, r.verify.max_abs_err)
      .number_if(verified, r.verify.tolerance);
  row.text(kernels).text(r.device);
  row.integer_if(r.seed);
  row.text(to_string(r.fault));
  row.text(timed ? r.timing.clock_policy : std::string());
  row.number_if(timed && r.timing.clock_mhz > 0, r.timing.clock_mhz)
      .number_if(timed && r.timing.power_w > 0, r.timing.power_w);
  row.integer_if(verified, r.verify.rows_checked)
      .integer_if(verified, r.verify.rows_total)
      .number_if(verified, r.verify.seconds);
  return std::move(row).str();
}

std::unique_ptr<Sink> make_csv_sink(const std::filesystem::path& path) {
  return std::make_unique<CsvSink>(path);
}

}  // namespace attnprof
