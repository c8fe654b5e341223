// The answer first (answer.hpp, headline.hpp): shape classes, the fastest per class with its
// margin or its ties, the best of another library and of the other family, on synthetic rows with
// known answers; and the first screen of the report of committed H200 journals, as golden files.
#include <gtest/gtest.h>

#include <filesystem>

#include "attnprof/journal.hpp"
#include "attnprof/registry.hpp"
#include "report/answer.hpp"
#include "report/fixtures.hpp"
#include "report/headline.hpp"
#include "report/table.hpp"

namespace attnprof {
namespace {

using test::row;

// The library a row's provider declares, as these tests name them.
Result with_library(Result r, const std::string& library) {
  r.traits.library = library;
  return r;
}

TEST(Answer, ShapeClassesSplitPrefillDecodeAndTheVariants) {
  Spec s =
      test::make_spec(4, 16, 16, 4096, 4096, 128, DType::bf16, {MaskKind::causal_tl, 0}, Mode::fwd);
  EXPECT_EQ(shape_class(s).label, "prefill D128 causal bf16");
  EXPECT_EQ(shape_class(s).kind, ShapeKind::prefill);
  Spec decode =
      test::make_spec(64, 32, 8, 1, 8192, 128, DType::bf16, {MaskKind::causal_br, 0}, Mode::fwd);
  EXPECT_EQ(shape_class(decode).label, "decode KV 8192 B64 q1 H32/8 D128 bf16");
  decode.q_len = 4;  // a speculative draft: the mask hides keys now
  EXPECT_EQ(shape_class(decode).label, "decode KV 8192 B64 q4 H32/8 D128 bf16 causal-br");
  Spec paged = decode;
  paged.page_size = 16;
  EXPECT_EQ(shape_class(paged).label, "paged 16 decode KV 8192 B64 q4 H32/8 D128 bf16 causal-br");
  Spec ragged = s;
  ragged.seqlens = "uniform:512:4096";
  EXPECT_EQ(shape_class(ragged).label, "ragged uniform:512:4096 prefill D128 causal bf16");
  Spec mla = s;
  mla.head_dim = 192;
  mla.v_head_dim = 128;
  EXPECT_EQ(shape_class(mla).label, "MLA prefill D192/128 causal bf16");
  Spec fp8 = s;
  fp8.dtype = DType::fp8_e4m3;
  EXPECT_EQ(shape_class(fp8).label, "fp8 prefill D128 causal fp8_e4m3");
  Spec bwd = s;
  bwd.mode = Mode::bwd;
  EXPECT_EQ(shape_class(bwd).label, "backward (bwd) prefill D128 causal bf16");
  EXPECT_EQ(shape_class(bwd).kind, ShapeKind::backward);
  Spec bshd = s;
  bshd.layout = Layout::bshd;
  bshd.softcap = 50;
  EXPECT_EQ(shape_class(bshd).label, "prefill D128 causal bf16 bshd softcap50");
}

// cuDNN fastest at every shape; our kernel 1.2x its time, naive 4x: the runner-up, the best of
// another library and the best of the other family, each with its ratio over the shared shapes.
TEST(Answer, FastestRunnerUpOtherLibraryAndOtherFamily) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048, 4096}) {
    const double t = static_cast<double>(n);
    rows.push_back(with_library(row("cuda.naive", 1, 8, 8, n, 4 * t, n * n), "cuBLAS"));
    rows.push_back(with_library(row("cudnn.sdpa", 1, 8, 8, n, t, 1024), "cuDNN"));
    rows.push_back(with_library(row("cuda.flash", 1, 8, 8, n, 1.2 * t, 0), "attnprof"));
    Result expand = with_library(row("cuda.naive.expand", 1, 8, 8, n, 0.5 * t, 0), "cuBLAS");
    rows.push_back(expand);  // prices GQA expansion; never the answer, however fast
  }
  const std::vector<ClassAnswer> answers = answer_by_class(rows);
  ASSERT_EQ(answers.size(), 1u);
  const ClassAnswer& a = answers[0];
  EXPECT_EQ(a.shape_class.label, "prefill D64 causal fp16");
  EXPECT_EQ(a.shapes, 3);
  EXPECT_EQ(a.fastest, "cudnn.sdpa");
  ASSERT_NE(a.runner_up(), nullptr);
  EXPECT_EQ(a.runner_up()->provider, "cuda.flash");
  EXPECT_NEAR(a.runner_up()->ratio, 1.2, 1e-12);
  EXPECT_TRUE(a.tied().empty());
  EXPECT_EQ(a.other_library()->provider, "cuda.flash");
  EXPECT_EQ(a.other_family()->provider, "cuda.naive");
  EXPECT_NEAR(a.other_family()->ratio, 4.0, 1e-12);
  const Table t = answer_table(answers).table;
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0],
            (std::vector<std::string>{"prefill D64 causal fp16", "3", "cudnn.sdpa",
                                      "cuda.flash: 1.20× slower (3 shapes)",
                                      "cuda.flash (attnprof): 1.20× slower (3 shapes)",
                                      "cuda.naive (unfused): 4.00× slower (3 shapes)", "-"}));
}

// The same cuDNN kernel under two names, 0.5% apart with cv 1.2% each: a tie, named with its
// ratio and the noise it is within; 5% apart is a margin.
TEST(Answer, RatiosWithinTheRowsNoiseAreTies) {
  std::vector<Result> rows;
  for (int64_t n : {512, 1024, 2048}) {
    const double t = static_cast<double>(n);
    rows.push_back(with_library(row("cudnn.sdpa", 1, 8, 8, n, t, 0), "cuDNN"));
    rows.push_back(with_library(row("torch.sdpa.cudnn", 1, 8, 8, n, 1.005 * t, 0), "PyTorch"));
  }
  std::vector<ClassAnswer> answers = answer_by_class(rows);
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_EQ(answers[0].tied().size(), 1u);
  EXPECT_EQ(answer_table(answers).table.rows[0][3],
            "tied within noise with torch.sdpa.cudnn (1.00×, noise 2.40%)");
  for (Result& r : rows)
    if (r.provider == "torch.sdpa.cudnn") r.timing.median_us *= 1.05 / 1.005;
  answers = answer_by_class(rows);
  EXPECT_TRUE(answers[0].tied().empty());
  EXPECT_EQ(answer_table(answers).table.rows[0][3], "torch.sdpa.cudnn: 1.05× slower (3 shapes)");
}

// A provider that ran only some of the class's shapes is not named fastest for the class, even
// where it is faster; it is held against the fastest where it ran at least half of its shapes.
TEST(Answer, AProviderThatRanFewerShapesIsNotNamedForTheClass) {
  std::vector<Result> rows;
  for (int64_t n : {512, 1024, 2048, 4096}) {
    const double t = static_cast<double>(n);
    rows.push_back(with_library(row("cudnn.sdpa", 1, 8, 8, n, t, 0), "cuDNN"));
    if (n <= 1024)  // 2 of 4 shapes: held against it, 1.25x faster there
      rows.push_back(with_library(row("cuda.flash", 1, 8, 8, n, 0.8 * t, 0), "attnprof"));
    if (n == 512)  // 1 of 4: below half, left out
      rows.push_back(with_library(row("py.mine", 1, 8, 8, n, 0.1 * t, 0), "mine"));
  }
  const std::vector<ClassAnswer> answers = answer_by_class(rows);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].fastest, "cudnn.sdpa");
  ASSERT_EQ(answers[0].others.size(), 1u);
  EXPECT_EQ(answer_table(answers).table.rows[0][3],
            "cuda.flash: 1.25× faster at the 2 of 4 shapes it ran");
}

// Decode classes stand apart from prefill, and the headline names who leads each kind.
TEST(Answer, TheHeadlineNamesWhoToDeployPerKind) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048}) {
    const double t = static_cast<double>(n);
    rows.push_back(with_library(row("cudnn.sdpa", 1, 8, 8, n, t, 0), "cuDNN"));
    rows.push_back(with_library(row("cuda.flash", 1, 8, 8, n, 1.5 * t, 0), "attnprof"));
    for (const char* p : {"cudnn.sdpa", "cuda.decode"}) {
      Result d =
          with_library(row(p, 64, 8, 8, n, p == std::string("cuda.decode") ? 10 : 11, 0), "x");
      d.spec.q_len = 1;
      d.spec.mask = {MaskKind::causal_br, 0};  // a decode step sees every key
      d.bound = "memory";
      d.pct_peak_bw = p == std::string("cuda.decode") ? 97.0 : 88.0;
      rows.push_back(d);
    }
  }
  const std::vector<ClassAnswer> answers = answer_by_class(rows);
  ASSERT_EQ(answers.size(), 3u);  // one prefill class, a decode class per KV length
  EXPECT_EQ(answers[1].shape_class.label, "decode KV 1024 B64 q1 H8 D64 fp16");
  const std::vector<Finding> h = headline_findings(rows, answers, "", {});
  ASSERT_GE(h.size(), 2u);
  EXPECT_EQ(h[0].text,
            "Deploy `cudnn.sdpa` for prefill (fastest in 1 of 1 class) and `cuda.decode` for "
            "decode (fastest in 2 of 2 classes).");
  EXPECT_EQ(h[1].text,
            "`cuda.decode` reaches up to 97.0% of the measured bandwidth where it leads, so memory "
            "bandwidth binds it.");
  // Well above the ceiling (a CPU's AVX-512 kernels against OpenBLAS's AVX2 sgemm): the ceiling
  // is not the limit, and nothing is said to bind.
  for (Result& r : rows)
    if (r.provider == "cuda.decode") r.pct_peak_bw = 154.0;
  const std::vector<Finding> above = headline_findings(rows, answers, "", {});
  ASSERT_GE(above.size(), 2u);
  EXPECT_EQ(above[1].text,
            "`cuda.decode` runs at up to 154% of the measured bandwidth where it leads: above it, "
            "so that ceiling (`attnprof peaks`) is not this device's limit for its kernels and "
            "what binds it is not known.");
}

// ---- golden: the first screen of reports of committed H200 journals --------------------------

std::vector<Result> journal_rows(const std::vector<std::string>& names) {
  std::vector<Result> rows;
  for (const std::string& name : names) {
    for (Result& r : read_journal(std::filesystem::path(ATTNPROF_TEST_BENCH_DIR) / name).rows)
      rows.push_back(std::move(r));
  }
  backfill_traits(rows);
  return rows;
}

// The answer table and the headline findings, as the Markdown report opens.
std::string first_screen(const std::vector<Result>& rows, const std::optional<TuneSummary>& tune) {
  const std::vector<ClassAnswer> answers = answer_by_class(rows);
  std::string out = render_markdown(answer_table(answers).table) + "\n";
  for (const Finding& f : headline_findings(rows, answers, choose_baseline(rows, ""), tune))
    out += "- " + f.text + "\n";
  return out;
}

TEST(Answer, FaBenchOnTheH200) {
  test::expect_golden(
      "answer-fa-bench.md",
      first_screen(journal_rows({"h200/2026-12-04-audits/call2-fa-bench.jsonl.gz"}), std::nullopt));
}

TEST(Answer, DecodeOnTheH200) {
  test::expect_golden(
      "answer-decode.md",
      first_screen(journal_rows({"h200/2026-12-04-audits/call2-decode.jsonl.gz"}), std::nullopt));
}

TEST(Answer, TheSeedsAndTheirTuneOnTheH200) {
  const std::string dir = "h200/2026-11-30-answers/";
  test::expect_golden(
      "answer-seeds.md",
      first_screen(
          journal_rows({dir + "seed-000.jsonl.gz", dir + "seed-003.jsonl.gz"}),
          read_tune_summary(std::filesystem::path(ATTNPROF_TEST_BENCH_DIR) / dir / "tune.json")));
}

}  // namespace
}  // namespace attnprof
