#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnprof/registry.hpp"

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
