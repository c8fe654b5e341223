// The console: a fixed-width table, one line per finished point, and progress.
//   tty:     rows, with a progress line "[k/N] ETA mm:ss provider shape" below them that is
//            redrawn in place with '\r' (padded with spaces, no escape codes).
//   not tty: every row prefixed "[k/N] ", nothing redrawn (logs, CI).
// Both end with a summary line counting the statuses.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/console.hpp"
#include "report/measured.hpp"
#include "report/units.hpp"

namespace attnprof {
namespace {

// Column widths. The provider column is as wide as the run's longest provider name (at least
// kProvider); a shape longer than its column pushes the rest of its row right rather than being
// cut: provider and shape name the point.
// Widths fit "torch.sdpa.flash", "B2 H32/8 Nq512 Nk4096 D128 bf16 causal-br fwd", "~48.2 ms",
// "-1.50 GiB" and "3.1e-07"; the whole line is 135 columns.
constexpr std::size_t kProvider = 16, kShape = 45, kStatus = 13;
constexpr std::size_t kTime = 8, kTflops = 7, kGbps = 6, kMemory = 9, kError = 7;
constexpr std::size_t kGap = 2;
// Columns after status; a non-passed row prints its reason there instead.
constexpr std::size_t kMetrics = 2 * kTime + kTflops + kGbps + kMemory + kError + 5 * kGap;

std::string rstrip(std::string s) {
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

std::string metrics(const std::string& median, const std::string& p95, const std::string& tflops,
                    const std::string& gbps, const std::string& extra, const std::string& err) {
  return fmt::format("{:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}", median, kTime, p95, kTime,
                     tflops, kTflops, gbps, kGbps, extra, kMemory, err, kError);
}

std::string line(std::string_view provider, std::size_t provider_width, std::string_view shape,
                 std::string_view status, std::string_view rest) {
  return rstrip(fmt::format("{:<{}}  {:<{}}  {:<{}}  {}", provider,
                            std::max(provider_width, kProvider), shape, kShape, status, kStatus,
                            rest));
}

// A long absolute path inside a reason ("torch not importable in /home/u/.venvs/x/bin/python3:
// ...") keeps its last part, so what the reason says is not cut off behind it on the console.
std::string shorten_paths(const std::string& text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const bool starts = text[i] == '/' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '(');
    if (!starts) {
      out += text[i++];
      continue;
    }
    std::size_t end = text.find_first_of(" :,;)", i);
    if (end == std::string::npos) end = text.size();
    const std::string path = text.substr(i, end - i);
    const std::size_t last = path.find_last_of('/');
    out += path.size() > 24 && last > 0 ? "…" + path.substr(last) : path;
    i = end;
  }
  return out;
}

std::string status_summary(const std::map<Status, int64_t>& counts) {
  std::string out;
  for (const auto& [status, count] : counts) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", count, to_string(status));
  }
  return out;
}

class ConsoleSink final : public Sink {
 public:
  ConsoleSink(std::ostream& os, bool tty, SecondsClock clock, std::size_t provider_width)
      : os_(os),
        tty_(tty),
        clock_(std::move(clock)),
        start_(clock_()),
        provider_width_(provider_width) {}

  void begin(int64_t total_points) override {
    total_ = total_points;
    start_ = clock_();
    // Non-tty rows carry a "[k/N] " prefix; indent the header by as much so columns line up.
    const std::string indent(tty_ ? 0 : prefix(total_).size(), ' ');
    os_ << indent << console_header(provider_width_) << '\n';
    os_.flush();
  }

  void begin_point(const std::string& provider, const Spec& spec) override {
    if (!tty_) return;
    draw_progress(finished_ + 1, provider + " " + spec.label());
  }

  void write(const Result& r) override {
    ++finished_;
    ++counts_[r.status];
    noisy_ = noisy_ || (has_timing(r) && r.timing.noisy);
    if (tty_) {
      print_over_progress(console_row(r, provider_width_));
      if (total_ > finished_) draw_progress(finished_, "");
    } else {
      os_ << prefix(finished_) << console_row(r, provider_width_) << '\n';
    }
    os_.flush();
  }

  void end() override {
    const std::string summary =
        fmt::format("{} point{} in {}: {}", finished_, finished_ == 1 ? "" : "s",
                    format_clock(clock_() - start_), status_summary(counts_));
    if (tty_) {
      print_over_progress(summary);
    } else {
      os_ << summary << '\n';
    }
    if (noisy_) {
      os_ << "~ noisy: sampling stopped at its limit with too few samples or the noise above the "
             "bound (the row's stop_reason says which)\n";
    }
    os_.flush();
  }

 private:
  // "[k/N] " with k padded to the width of N, so the rows below stay aligned.
  std::string prefix(int64_t k) const {
    if (total_ <= 0) return fmt::format("[{}] ", k);
    const std::size_t digits = fmt::formatted_size("{}", total_);
    return fmt::format("[{:>{}}/{}] ", k, digits, total_);
  }

  // ETA: mean wall time per finished point times the points left (the running one included).
  std::string eta() const {
    if (finished_ == 0) return format_clock(-1);
    const double per_point = (clock_() - start_) / static_cast<double>(finished_);
    return format_clock(per_point * static_cast<double>(total_ - finished_));
  }

  void draw_progress(int64_t k, const std::string& current) {
    std::string text = rstrip(fmt::format("{}ETA {}  {}", prefix(k), eta(), current));
    const std::size_t width = display_width(text);
    if (width < progress_width_) text.append(progress_width_ - width, ' ');
    os_ << '\r' << text;
    progress_width_ = width;
    os_.flush();
  }

  // Replaces the progress line (if any) by `text` and ends the line.
  void print_over_progress(const std::string& text) {
    std::string padded = text;
    const std::size_t width = display_width(text);
    if (width < progress_width_) padded.append(progress_width_ - width, ' ');
    os_ << (progress_width_ > 0 ? "\r" : "") << padded << '\n';
    progress_width_ = 0;
  }

  std::ostream& os_;
  bool tty_;
  SecondsClock clock_;
  double start_;
  int64_t total_ = 0;
  int64_t finished_ = 0;
  std::map<Status, int64_t> counts_;
  bool noisy_ = false;
  std::size_t progress_width_ = 0;  // columns of the progress line on screen, 0 if none
  std::size_t provider_width_;
};

}  // namespace

std::string format_clock(double seconds) {
  if (!(seconds >= 0)) return "--:--";  // negative or NaN: unknown
  const auto total = static_cast<int64_t>(std::llround(seconds));
  const int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{:02}:{:02}", m, s);
}

std::string console_header(std::size_t provider_width) {
  return line("provider", provider_width, "shape", "status",
              metrics("median", "p95", "TFLOP/s", "GB/s", "extra mem", "rel err"));
}

std::string console_row(const Result& r, std::size_t provider_width) {
  const std::string provider = one_line(r.provider);
  const std::string shape = r.spec.label();
  const std::string_view status = to_string(r.status);
  if (r.status != Status::passed) {
    return line(provider, provider_width, shape, status,
                truncate_to_width(shorten_paths(one_line(r.reason)), kMetrics));
  }
  const bool timed = has_timing(r);
  const std::string noisy = timed && r.timing.noisy ? "~" : "";
  return line(provider, provider_width, shape, status,
              metrics(timed ? noisy + format_duration_us(r.timing.median_us) : "-",
                      timed ? format_duration_us(r.timing.p95_us) : "-",
                      timed ? format_sig3(r.tflops) : "-", timed ? format_sig3(r.gbps) : "-",
                      has_memory(r) ? format_bytes(static_cast<double>(r.memory.extra_bytes)) : "-",
                      has_verify(r) ? format_error(r.verify.rel_l2_err) : "-"));
}

std::unique_ptr<Sink> make_console_sink(std::ostream& os, bool tty, SecondsClock clock,
                                        std::size_t provider_width) {
  return std::make_unique<ConsoleSink>(os, tty, std::move(clock), provider_width);
}

std::unique_ptr<Sink> make_console_sink(std::ostream& os, bool tty, std::size_t provider_width) {
  return make_console_sink(
      os, tty,
      [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
      },
      provider_width);
}

}  // namespace attnprof
