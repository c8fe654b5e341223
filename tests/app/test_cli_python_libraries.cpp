// The CPU providers of the libraries people deploy attention with (issue 59): OpenVINO's
// ScaledDotProductAttention, JAX's dot_product_attention on XLA's CPU backend and PyTorch's CPU
// SDPA, through `attnprof run --device cpu`: every mask, GQA, both layouts, verified against fp64
// on the harness's tensors, the library's version in the row and its lowering in the note; and
// what each refuses, refused with why. CI installs openvino and jax (scripts/install-deps.sh), so
// their tests never skip there; torch is not installed in CI (its wheel brings gigabytes of CUDA
// libraries) and its test skips where it does not import (tests/allowed_skips.toml).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/python_cli.hpp"

namespace attnprof {
namespace {

using testing_python::library_missing;
using testing_python::python_unavailable;

// GQA (4 query heads on 2 KV heads) with more keys than queries, so causal (top-left) and
// causal-br differ and a window hides keys on both sides.
const std::string kGqaPoint =
    " --device cpu --heads 4 --kv-heads 2 --seq 48 --kv-seq 80 --head-dim 16 --min-time 1ms "
    "--point-timeout 50ms --min-samples 3 --no-trace --no-history ";

class LibraryCli : public testing_python::PythonCliTest {
 protected:
  // Every mask in both layouts and each of `dtypes`, in one run: each row passed, checked on
  // every row, its library and version declared, its note holding `note`.
  void expect_every_mask_passes(const std::string& provider, const std::string& dtypes,
                                const std::string& library, const std::string& note) {
    const std::filesystem::path out = dir_ / "masks.jsonl";
    const testing_cli::Outcome o = testing_cli::run_cli(fmt::format(
        "run --providers {} --mask none,causal,causal-br,window:9 --layout bhsd,bshd --dtype {}{} "
        "--out {}",
        provider, dtypes, kGqaPoint, out.string()));
    ASSERT_TRUE(std::filesystem::exists(out)) << o.err;
    const std::vector<Result> rows = read_journal(out).rows;
    EXPECT_EQ(rows.size(), 8u * (dtypes.find(',') == std::string::npos ? 1 : 2)) << o.err;
    for (const Result& r : rows) {
      const std::string where = r.spec.key();
      EXPECT_EQ(r.status, Status::passed) << where << ": " << r.reason;
      EXPECT_EQ(r.verify.rows_checked, r.verify.rows_total) << where;
      EXPECT_EQ(r.traits.library, library);
      EXPECT_FALSE(r.traits.library_version.empty());
      EXPECT_NE(r.provider_note.find(note), std::string::npos) << r.provider_note;
    }
  }

  // What the provider cannot take is refused with why and never reaches the library: a logit
  // softcap and a paged cache (the runner, from its traits), the backward (the Python worker).
  void expect_refusals(const std::string& provider) {
    for (const char* args : {"--softcap 2", "--page-size 16", "--mode bwd"}) {
      auto rows =
          run_rows(fmt::format("--providers {} --dtype fp32 {}{}", provider, args, kGqaPoint));
      ASSERT_TRUE(rows.count(provider)) << args;
      EXPECT_EQ(rows[provider].status, Status::not_supported) << args;
      EXPECT_FALSE(rows[provider].reason.empty()) << args;
    }
  }
};

#define REQUIRE_LIBRARY(provider, modules)                                             \
  if (const std::string why = python_unavailable(); !why.empty()) GTEST_SKIP() << why; \
  if (const std::string why = library_missing(provider, modules); !why.empty())        \
    GTEST_SKIP() << modules << " not importable (scripts/install-deps.sh installs it): " << why;

TEST_F(LibraryCli, OpenVinoSdpaPassesEveryMaskWithGqaInFp32AndBf16) {
  REQUIRE_LIBRARY("py.openvino.cpu.sdpa", "openvino");
  // bf16 where this CPU's plugin offers it; elsewhere refused with why.
  auto bf16 = run_rows("--providers py.openvino.cpu.sdpa --dtype bf16" + kGqaPoint);
  const Result& b = bf16["py.openvino.cpu.sdpa"];
  const bool has_bf16 = b.status == Status::passed;
  if (!has_bf16) {
    EXPECT_EQ(b.status, Status::not_supported) << b.reason;
    EXPECT_NE(b.reason.find("does not offer BF16"), std::string::npos) << b.reason;
  }
  expect_every_mask_passes("py.openvino.cpu.sdpa", has_bf16 ? "fp32,bf16" : "fp32", "OpenVINO",
                           "compiled to: ");
  expect_refusals("py.openvino.cpu.sdpa");
}

TEST_F(LibraryCli, JaxXlaOnTheCpuPassesEveryMaskWithGqa) {
  REQUIRE_LIBRARY("py.jax.xla.cpu", "jax");
  expect_every_mask_passes("py.jax.xla.cpu", "fp32", "JAX",
                           "jax.nn.dot_product_attention(implementation='xla')");
  expect_refusals("py.jax.xla.cpu");
  auto bf16 = run_rows("--providers py.jax.xla.cpu --dtype bf16" + kGqaPoint);
  EXPECT_EQ(bf16["py.jax.xla.cpu"].status, Status::not_supported);
  EXPECT_NE(bf16["py.jax.xla.cpu"].reason.find("fp32 only"), std::string::npos);
}

TEST_F(LibraryCli, TorchSdpaOnTheCpuPassesEveryMaskWithGqa) {
  if (const std::string why = python_unavailable(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = library_missing("py.torch.sdpa.cpu", "torch"); !why.empty())
    GTEST_SKIP() << "torch not importable (not installed in CI: its wheel brings the CUDA "
                    "libraries; README, 'Providers'): "
                 << why;
  expect_every_mask_passes("py.torch.sdpa.cpu", "fp32,bf16", "PyTorch", "backend chosen: ");
  expect_refusals("py.torch.sdpa.cpu");
}

}  // namespace
}  // namespace attnprof
