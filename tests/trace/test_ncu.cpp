// Nsight Compute's CSV as `ncu --csv --metrics ...` prints it (one row per kernel and metric,
// its own ==PROF== lines and the program's output around it), and the PATH lookup.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "attnprof/ncu.hpp"

namespace attnprof {
namespace {

const char* kCsv =
    "==PROF== Connected to process 4242 (/work/build/attnprof)\n"
    "==PROF== Profiling \"nvjet_sm90_tst_256x128_64x4...\" - 0: 0%....50%....100% - 3 passes\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
    "\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"4242\",\"attnprof\",\"127.0.0.1\",\"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT\","
    "\"1\",\"13\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"21.35\"\n"
    "\"0\",\"4242\",\"attnprof\",\"127.0.0.1\",\"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT\","
    "\"1\",\"13\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"gpu__time_duration.sum\",\"msecond\",\"1.25\"\n"
    "\"0\",\"4242\",\"attnprof\",\"127.0.0.1\",\"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT\","
    "\"1\",\"13\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active\",\"%\",\"78.9\"\n"
    "\"1\",\"4242\",\"attnprof\",\"127.0.0.1\",\"masked_softmax_kernel\",\"1\",\"13\","
    "\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"gpu__time_duration.sum\",\"usecond\",\"1,234.5\"\n"
    "\"1\",\"4242\",\"attnprof\",\"127.0.0.1\",\"masked_softmax_kernel\",\"1\",\"13\","
    "\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"91\"\n"
    "\"1\",\"4242\",\"attnprof\",\"127.0.0.1\",\"masked_softmax_kernel\",\"1\",\"13\","
    "\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active\",\"%\",\"n/a\"\n"
    "==PROF== Disconnected from process 4242\n";

// trace --ncu profiles the point it traced: the child gets every axis of the spec (layout, scale
// and shared latent too), the provider, its settings, the seed and the warm-up.
TEST(NcuTarget, TheChildGetsThePointWhole) {
  Spec s;
  s.head_dim = 576;
  s.v_head_dim = 512;
  s.layout = Layout::bshd;
  s.scale = 0.0625;
  s.shared_latent = true;
  const std::vector<std::string> argv =
      ncu_target_argv("/x/attnprof", s, "cuda.mla.decode", {{"split", "1:64"}}, 7, 2);
  const auto pair = [&](const std::string& flag, const std::string& value) {
    for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == flag && argv[i + 1] == value) return true;
    }
    return false;
  };
  EXPECT_EQ(argv.at(0), "/x/attnprof");
  EXPECT_EQ(argv.at(1), "trace");
  EXPECT_TRUE(pair("--layout", "bshd"));
  EXPECT_TRUE(pair("--scale", "0.0625"));
  EXPECT_TRUE(pair("--shared-latent", "on"));
  EXPECT_TRUE(pair("--v-head-dim", "512"));
  EXPECT_TRUE(pair("--providers", "cuda.mla.decode"));
  EXPECT_TRUE(pair("--set", "cuda.mla.decode.split=1:64"));
  EXPECT_TRUE(pair("--seed", "7"));
  EXPECT_TRUE(pair("--warmup", "2"));
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--ncu-target"), argv.end());
}

TEST(NcuCsv, ReadsEachKernelsMetrics) {
  const std::vector<NcuKernel> k = parse_ncu_csv(kCsv);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(k[0].category, KernelCategory::gemm);
  EXPECT_DOUBLE_EQ(k[0].duration_us, 1250.0);  // msecond
  EXPECT_DOUBLE_EQ(*k[0].dram_pct, 21.35);
  EXPECT_DOUBLE_EQ(*k[0].tensor_pct, 78.9);
  EXPECT_EQ(k[1].category, KernelCategory::softmax_reduction);
  EXPECT_DOUBLE_EQ(k[1].duration_us, 1234.5);  // thousands separator
  EXPECT_DOUBLE_EQ(*k[1].dram_pct, 91.0);
  EXPECT_FALSE(k[1].tensor_pct.has_value());  // "n/a"
}

TEST(NcuCsv, NoHeaderNoKernels) {
  EXPECT_TRUE(parse_ncu_csv("==PROF== No kernels were profiled.\n").empty());
  EXPECT_TRUE(parse_ncu_csv("\"0\",\"1\"\n").empty());
}

TEST(NcuCsv, RendersTimeWeightedTotals) {
  NcuReport rep;
  rep.kernels = parse_ncu_csv(kCsv);
  const std::string text = render_ncu(rep, false);
  // DRAM: (21.35 * 1250 + 91 * 1234.5) / 2484.5 = 55.96%; tensor pipe only where measured.
  EXPECT_NE(text.find("56.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("78.9%"), std::string::npos) << text;
  NcuReport none;
  none.error = "==ERROR== the profiler failed";
  EXPECT_EQ(render_ncu(none, false), "ncu: ==ERROR== the profiler failed\n");
}

TEST(NcuCommand, ClockControlNoneAndProfilerRange) {
  const auto cmd = ncu_command("/usr/bin/ncu", {"/bin/attnprof", "trace", "--ncu-target"});
  ASSERT_GE(cmd.size(), 10u);
  EXPECT_EQ(cmd[1], "--clock-control");
  EXPECT_EQ(cmd[2], "none");
  EXPECT_EQ(cmd[3], "--profile-from-start");
  EXPECT_EQ(cmd[4], "off");
  EXPECT_NE(cmd[6].find("sm__pipe_tensor_op_hmma_cycles_active"), std::string::npos);
  EXPECT_EQ(cmd[7], "--csv");
  EXPECT_EQ(cmd.back(), "--ncu-target");
}

TEST(FindOnPath, FindsExecutablesOnly) {
  const auto dir = std::filesystem::temp_directory_path() / "attnprof_path_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "fake-ncu") << "#!/bin/sh\n";
  std::filesystem::permissions(dir / "fake-ncu", std::filesystem::perms::owner_all);
  std::ofstream(dir / "not-exec") << "x";
  std::filesystem::permissions(dir / "not-exec", std::filesystem::perms::owner_read);
  const std::string old = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", ("/nonexistent:" + dir.string()).c_str(), 1);
  EXPECT_EQ(find_on_path("fake-ncu"), (dir / "fake-ncu").string());
  EXPECT_EQ(find_on_path("not-exec"), "");
  EXPECT_EQ(find_on_path("no-such-tool-here"), "");
  ::setenv("PATH", old.c_str(), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attnprof
