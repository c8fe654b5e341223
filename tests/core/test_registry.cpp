#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

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
