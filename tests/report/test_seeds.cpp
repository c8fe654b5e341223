// The seeds' comparison (seeds.hpp): a row per system at the reference shape, with its speedup and
// memory against naive, or why it has none: the row's own reason at that shape, the points it ran
// elsewhere, or what `attnprof list` says of its providers here.
#include <gtest/gtest.h>

#include "report/fixtures.hpp"
#include "report/seeds.hpp"

namespace attnprof {
namespace {

using test::row;

std::vector<std::string> row_of(const TableSection& s, const std::string& system) {
  for (const auto& r : s.table.rows)
    if (r.front() == system) return r;
  ADD_FAILURE() << "no row for " << system;
  return {};
}

TEST(Seeds, EverySystemHasItsFigureOrWhyNot) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048}) {
    const double t = static_cast<double>(n);
    rows.push_back(row("cuda.naive", 1, 8, 8, n, 4 * t, 64 << 20));
    rows.push_back(row("torch.sdpa.flash", 1, 8, 8, n, t, 1 << 20));
  }
  // At the larger shape the efficient backend refused; the math backend ran only where naive did
  // not (so that is no reference shape).
  Result refused = row("torch.sdpa.efficient", 1, 8, 8, 2048, 0, 0);
  refused.status = Status::not_supported;
  refused.reason = "no kernel for this shape";
  rows.push_back(refused);
  rows.push_back(row("torch.sdpa.math", 1, 8, 8, 512, 9000, 0));
  ReportOptions o;
  o.catalog = {{"trt.fp16", DeviceKind::cuda, {false, "not built: TensorRT is not here"}},
               {"py.fa4", DeviceKind::cuda, {true, ""}}};
  o.python_unavailable = "no python3 on PATH";
  const TableSection s = seeds_table(rows, "cuda.naive", o);
  EXPECT_NE(s.intro.find("B1 H8 N2048 D64 fp16 causal fwd (NVIDIA H200, cold)"), std::string::npos)
      << s.intro;
  ASSERT_EQ(s.table.rows.size(), seed_systems().size() + 1);
  EXPECT_EQ(row_of(s, "naive (the baseline)"),
            (std::vector<std::string>{"naive (the baseline)", "cuda.naive", "8.19 ms", "1.00", "-",
                                      "65.0 MiB", "the baseline"}));
  const auto flash = row_of(s, "SDPA, flash backend (FlashAttention-2 in ATen)");
  EXPECT_EQ(flash[1], "torch.sdpa.flash");
  EXPECT_EQ(flash[4], "4.00×");
  EXPECT_EQ(flash[5], "2.00 MiB (0.0308×)");
  EXPECT_EQ(row_of(s, "SDPA, efficient backend (xFormers' kernel in ATen)")[6],
            "not_supported: no kernel for this shape");
  EXPECT_EQ(row_of(s, "SDPA, math backend")[6],
            "not run at the reference shape (passed at 1 other point)");
  EXPECT_EQ(row_of(s, "TensorRT FP16")[6], "unavailable: not built: TensorRT is not here");
  EXPECT_EQ(row_of(s, "FlashAttention-4")[6],
            "not in these rows (available here: --providers py.fa4)");
  EXPECT_EQ(row_of(s, "FlashInfer")[6],
            "not in these rows; Python providers unavailable here: no python3 on PATH");
}

}  // namespace
}  // namespace attnprof
