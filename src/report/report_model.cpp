// Building the report model: summary lines, findings, figures per series, tables.
#include "report/report_model.hpp"

#include "report/precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "report/answer.hpp"
#include "report/headline.hpp"
#include "report/seeds.hpp"
#include "report/series.hpp"

namespace attnprof {

namespace {

constexpr Status kStatusOrder[] = {Status::passed, Status::incorrect, Status::not_supported,
                                   Status::oom,    Status::failed,    Status::timeout,
                                   Status::skipped};

std::string status_counts(const std::vector<Result>& rows) {
  std::map<Status, int64_t> n;
  for (const Result& r : rows) ++n[r.status];
  std::string out;
  for (Status s : kStatusOrder) {
    if (n[s] > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n[s], to_string(s));
  }
  return out;
}

template <class Field>
std::vector<std::string> distinct(const std::vector<Result>& rows, Field field) {
  std::vector<std::string> out;
  for (const Result& r : rows) {
    std::string v = field(r);
    if (!v.empty() && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::vector<std::string> provenance_lines(const std::vector<Result>& rows, const ReportOptions& o,
                                          const std::string& baseline) {
  std::vector<std::string> s;
  if (!o.source.empty()) s.push_back(fmt::format("Source: {}", o.source));
  const auto devices = distinct(rows, [](const Result& r) { return r.device; });
  if (!devices.empty()) s.push_back(fmt::format("Devices: {}", fmt::join(devices, ", ")));
  const auto modes = distinct(
      rows, [](const Result& r) { return r.timing.samples > 0 ? r.timing.mode : std::string(); });
  if (!modes.empty()) {
    // The clock policy says what a compute-bound median means (docs/method.md, "Clocks"):
    // sustained sampling under a power cap, or isolated launches after the clock recovered.
    const auto policies = distinct(rows, [](const Result& r) {
      return r.timing.samples > 0 ? r.timing.clock_policy : std::string();
    });
    s.push_back(fmt::format(
        "Timing: {} (medians per launch){}", fmt::join(modes, ", "),
        policies.empty() ? "" : fmt::format("; clocks: {}", fmt::join(policies, ", "))));
  }
  s.push_back(fmt::format("Rows: {} ({})", rows.size(), status_counts(rows)));
  const auto all = distinct(rows, [](const Result& r) { return r.provider; });
  const auto passed = passed_providers(rows);
  std::vector<std::string> none;
  for (const std::string& p : all) {
    if (std::find(passed.begin(), passed.end(), p) == passed.end()) none.push_back(p);
  }
  s.push_back(
      fmt::format("Providers: {}{}", fmt::join(passed, ", "),
                  none.empty() ? "" : fmt::format(" (no passed rows: {})", fmt::join(none, ", "))));
  s.push_back(baseline.empty()
                  ? "Baseline: none (no provider that declares itself a baseline passed; choose "
                    "one with --baseline)"
                  : fmt::format("Baseline for speedups: {}", baseline));
  // Each key's values in order of first appearance: rows of several builds (a journal merged
  // from calls) name every build, not the first row's.
  std::vector<std::string> env;
  for (const char* k : {"git_commit", "build_type", "driver", "cuda_runtime", "cublas", "cudnn",
                        "torch", "power_limit", "ecc"}) {
    const auto values = distinct(rows, [&](const Result& r) {
      const auto it = r.env.find(k);
      return it == r.env.end() ? std::string() : it->second;
    });
    if (values.empty()) continue;
    std::string text = fmt::format("{} {}", k, values.front());
    if (values.size() > 1) {
      text +=
          fmt::format(" (also {})",
                      fmt::join(std::vector<std::string>(values.begin() + 1, values.end()), ", "));
    }
    env.push_back(text);
  }
  if (!env.empty()) s.push_back(fmt::format("Environment: {}", fmt::join(env, ", ")));
  const auto conventions = distinct(rows, [](const Result& r) { return r.flop_convention; });
  if (!conventions.empty()) {
    std::vector<std::string> spans;
    for (const std::string& c : conventions) spans.push_back("`" + c + "`");
    s.push_back(fmt::format("FLOPs counted as: {}", fmt::join(spans, "; ")));
  }
  return s;
}

}  // namespace

std::vector<const Figure*> ReportModel::figures() const {
  std::vector<const Figure*> out;
  for (const FigureGroup& g : groups) {
    for (const Figure& f : g.figures) out.push_back(&f);
  }
  return out;
}

std::vector<const Finding*> ReportModel::findings() const {
  std::vector<const Finding*> out;
  for (const Finding& f : headline) out.push_back(&f);
  for (const ProviderSection& p : providers)
    for (const Finding& f : p.findings) out.push_back(&f);
  for (const Finding& f : across) out.push_back(&f);
  return out;
}

void check_reportable(const std::vector<Result>& rows, const ReportOptions& options) {
  const std::vector<std::string> providers = passed_providers(rows);
  if (providers.empty()) {
    throw std::runtime_error(rows.empty() ? std::string("no rows to report on")
                                          : fmt::format("no passed rows to report on ({} rows: {})",
                                                        rows.size(), status_counts(rows)));
  }
  if (!options.baseline.empty() &&
      std::find(providers.begin(), providers.end(), options.baseline) == providers.end()) {
    throw std::invalid_argument(
        fmt::format("--baseline: '{}' has no passed rows here (providers "
                    "with passed rows: {})",
                    options.baseline, fmt::join(providers, ", ")));
  }
}

ReportModel build_report_model(const std::vector<Result>& rows, const ReportOptions& options) {
  check_reportable(rows, options);
  const std::vector<std::string> providers = passed_providers(rows);
  ReportModel m;
  m.title = options.title;
  m.baseline = choose_baseline(rows, options.baseline);
  const std::vector<ClassAnswer> answers = answer_by_class(rows);
  m.answer = answer_table(answers);
  m.headline = headline_findings(rows, answers, m.baseline, options.tune);
  m.seeds = seeds_table(rows, m.baseline, options);
  std::vector<Finding> detail = compute_findings(rows);
  if (options.tune) {
    for (Finding& f : tune_findings(*options.tune)) detail.push_back(std::move(f));
  }
  // Per provider, in the order their rows first passed; then those about several at once.
  for (const std::string& p : providers) m.providers.push_back({p, {}});
  for (Finding& f : detail) {
    const auto it =
        std::find_if(m.providers.begin(), m.providers.end(),
                     [&](const ProviderSection& s) { return s.provider == f.provider; });
    if (it == m.providers.end()) {
      if (f.provider.empty()) {
        m.across.push_back(std::move(f));
      } else {
        m.providers.push_back({f.provider, {std::move(f)}});
      }
    } else {
      it->findings.push_back(std::move(f));
    }
  }
  std::erase_if(m.providers, [](const ProviderSection& s) { return s.findings.empty(); });
  int next_id = 1;
  for (const SeriesGroup& g : group_series(rows)) {
    if (g.distinct_n() < 2) continue;  // a single N is a point, not a curve: the tables have it
    FigureGroup fg;
    fg.title = g.title;
    fg.figures = series_figures(g, m.baseline, providers, next_id);
    if (!fg.figures.empty()) m.groups.push_back(std::move(fg));
  }
  if (FigureGroup roof = roofline_figures(rows, providers, next_id); !roof.figures.empty())
    m.groups.push_back(std::move(roof));
  if (FigureGroup prec = precision_figures(rows, providers, next_id); !prec.figures.empty())
    m.groups.push_back(std::move(prec));
  m.tables = report_tables(rows, m.baseline);
  if (options.tune) m.tables.insert(m.tables.begin(), tune_table(*options.tune));
  m.provenance = provenance_lines(rows, options, m.baseline);
  return m;
}

namespace {

// A finding's text with its `code spans` rendered: the text between spans through `escape`, each
// span's content through `code` (an unclosed span runs to the end).
template <class Escape, class Code>
std::string render_spans(const std::string& text, Escape escape, Code code) {
  std::string out;
  bool in_code = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t tick = text.find('`', start);
    const std::string part =
        text.substr(start, tick == std::string::npos ? std::string::npos : tick - start);
    out += in_code ? code(part) : escape(part);
    if (tick == std::string::npos) break;
    in_code = !in_code;
    start = tick + 1;
  }
  return out;
}

}  // namespace

std::string finding_html(const std::string& text) {
  return render_spans(text, html_escape,
                      [](const std::string& c) { return "<code>" + html_escape(c) + "</code>"; });
}

std::string finding_markdown(const std::string& text) {
  return render_spans(text, markdown_escape, [](const std::string& c) { return "`" + c + "`"; });
}

}  // namespace attnprof
