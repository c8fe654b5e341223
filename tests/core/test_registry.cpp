#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnprof/grid.hpp"
#include "attnprof/registry.hpp"
#include "python/python_provider.hpp"

namespace attnprof {
namespace {

TEST(Registry, NamesAreUniqueAndDescribed) {
  std::set<std::string> names;
  for (const auto& p : all_providers()) {
    EXPECT_TRUE(names.insert(p->name()).second) << p->name();
    const ProviderTraits t = p->traits();
    EXPECT_FALSE(t.description.empty()) << p->name();
    EXPECT_FALSE(t.library.empty()) << p->name() << " declares no library";
    EXPECT_TRUE(t.forward || t.backward) << p->name();
    const Availability a = p->availability();
    if (!a.available) {
      EXPECT_FALSE(a.reason.empty()) << p->name();
    }
  }
  for (const char* n :
       {"cpu.reference", "cpu.naive", "cpu.flash", "cuda.naive", "cuda.math", "cudnn.sdpa"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
}

// Each provider declares its own settings beside its traits (provider_settings.hpp): the CUDA
// kernels' knobs, each described; cuda.flash.sm90's deterministic is its own, not cuda.flash's.
TEST(Registry, ProvidersDeclareTheirOwnSettings) {
  const auto names = [](const char* provider) {
    std::vector<std::string> out;
    for (const ProviderSetting& s : find_provider(provider)->traits().settings) {
      EXPECT_FALSE(s.help.empty()) << provider << "." << s.name;
      out.push_back(s.name);
    }
    return out;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(names("cuda.decode"), (Names{"pipeline", "copy", "l2", "split"}));
  EXPECT_EQ(names("cuda.mla.decode"), (Names{"split", "pipeline"}));
  EXPECT_EQ(names("cuda.flash.sm90"), (Names{"schedule", "order", "deterministic"}));
  EXPECT_EQ(names("cuda.flash"), (Names{"deterministic"}));
  EXPECT_TRUE(names("cudnn.sdpa").empty());
  EXPECT_TRUE(names("cpu.naive").empty());
}

TEST(Registry, GlobsSelectProviders) {
  EXPECT_TRUE(glob_match("cpu.*", "cpu.naive"));
  EXPECT_TRUE(glob_match("*.naive*", "cuda.naive.expand"));
  EXPECT_TRUE(glob_match("cpu.n?ive", "cpu.naive"));
  EXPECT_FALSE(glob_match("cpu.*", "cuda.naive"));
  const auto cpu = select_providers("cpu.*");
  EXPECT_EQ(cpu.size(), 3u);
  const auto two = select_providers("cpu.naive,cpu.naive,cpu.flash");
  EXPECT_EQ(two.size(), 2u);
  EXPECT_THROW(select_providers("cpu.nope"), std::invalid_argument);
}

}  // namespace
}  // namespace attnprof

namespace attnprof {
namespace {

// The default set of fa-bench on a described H200 (no GPU needed: every built-in CUDA provider is
// taken as available, as there): the decode-only kernels, which can run no fa-bench point, are
// left out with why, and a Python provider that imports (a proxy, whose worker decides the rest)
// is in. Decided from traits and supports() (registry.hpp default_set).
TEST(DefaultSet, FaBenchOnADescribedH200LeavesOutDecodeKernelsAndTakesPythonProviders) {
  python::ProviderInfo info;
  info.traits.name = "py.described.flex";
  info.traits.device = DeviceKind::cuda;
  info.traits.family = Family::fused;
  info.traits.in_default_set = true;
  info.available = true;
  std::vector<std::unique_ptr<Provider>> added;
  added.push_back(python::make_python_provider(info, WorkerGroup{}));
  add_providers(std::move(added));

  Device h200;
  h200.kind = DeviceKind::cuda;
  h200.name = "NVIDIA H200";
  h200.memory_bytes = int64_t{140} << 30;
  h200.sm_count = 132;
  h200.cc_major = 9;
  std::vector<Spec> specs;
  for (const GridAxes& ax : load_preset("fa-bench").series)
    for (const Spec& s : expand(ax)) specs.push_back(s);
  const DefaultSet set = default_set(h200, specs, [](const Provider&) { return std::string(); });
  std::set<std::string> in, out;
  for (const Provider* p : set.providers) in.insert(p->name());
  for (const auto& [p, why] : set.left_out) {
    out.insert(p->name());
    EXPECT_FALSE(why.empty()) << p->name();
  }
  EXPECT_TRUE(in.count("py.described.flex"));
  EXPECT_FALSE(in.count("cuda.decode"));
  EXPECT_FALSE(in.count("cuda.mla.decode"));
  EXPECT_TRUE(out.count("cuda.decode"));
  EXPECT_TRUE(out.count("cuda.mla.decode"));
  // Where the CUDA code is not built (the CPU and ASan presets) they are left out with why.
  for (const char* p : {"cuda.naive", "cuda.flash", "cuda.flash.sm90"}) {
#ifdef ATTNPROF_WITH_CUDA
    EXPECT_TRUE(in.count(p)) << p;
#else
    EXPECT_TRUE(out.count(p)) << p;
#endif
  }
  for (const Provider* p : set.providers) EXPECT_EQ(p->traits().device, DeviceKind::cuda);
}

}  // namespace
}  // namespace attnprof
