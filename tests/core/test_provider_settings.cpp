// Provider settings (src/core/provider_settings.cpp): --set's form and checks against a
// provider's declared settings, the sweep of several values, what a row records, and that the
// resume and compare keys see a setting. Which providers declare which settings is theirs
// (tests/core/test_registry.cpp).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "attnprof/env.hpp"
#include "attnprof/provider_settings.hpp"

namespace attnprof {
namespace {

const std::vector<ProviderSetting> kDeclared = {
    {"pipeline", {"auto", "4x3", "p64x3"}, 0, "the pipeline"},
    {"split", {}, 256, "W:C"},
};

std::string message_of(const std::string& text, const std::vector<ProviderSetting>& declared) {
  try {
    check_setting_assignment(parse_setting_assignment(text), text, declared);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ProviderSettings, SetChecksTheNameAndEveryValue) {
  const SettingAssignment a = parse_setting_assignment("cuda.decode.pipeline=p64x3,4x3");
  EXPECT_EQ(a.provider, "cuda.decode");
  EXPECT_EQ(a.name, "pipeline");
  EXPECT_EQ(a.values, (std::vector<std::string>{"p64x3", "4x3"}));
  EXPECT_EQ(message_of("cuda.decode.pipeline=p64x3,4x3", kDeclared), "");
  EXPECT_EQ(message_of("cuda.decode.split=8:2048", kDeclared), "");
  EXPECT_NE(message_of("cuda.decode.pipeline=4x3,9x9", kDeclared).find("takes one of auto, 4x3"),
            std::string::npos);
  EXPECT_NE(message_of("cuda.decode.split=8:100", kDeclared).find("C >= 256"), std::string::npos);
  EXPECT_NE(message_of("cuda.decode.split=8:2048x", kDeclared).find("W:C"), std::string::npos);
  EXPECT_NE(message_of("cuda.decode.speed=max", kDeclared).find("known: pipeline, split"),
            std::string::npos);
  EXPECT_NE(message_of("cudnn.sdpa.engine=3", {}).find("takes no settings"), std::string::npos);
  EXPECT_NE(message_of("pipeline", kDeclared).find("PROVIDER.NAME=VALUE"), std::string::npos);
  for (const std::string& m :
       {message_of("cuda.decode.pipeline=9x9", kDeclared), message_of("x.y=1", {})}) {
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(ProviderSettings, AProviderReadsItsValueOrItsDefault) {
  const Settings s = {{"split", "8:2048"}};
  EXPECT_EQ(setting_of(s, "split"), "8:2048");
  EXPECT_EQ(setting_of(s, "pipeline"), "");  // not given: the provider's default
  EXPECT_EQ(waves_chunk(setting_of(s, "split")), (std::pair<int64_t, int64_t>{8, 2048}));
  EXPECT_FALSE(waves_chunk(""));
  EXPECT_FALSE(waves_chunk("8:2048x"));
}

TEST(ProviderSettings, SeveralValuesSweepAsAProduct) {
  EXPECT_EQ(setting_combinations({}), std::vector<Settings>{Settings{}});
  const std::vector<Settings> c =
      setting_combinations({{"copy", {"tma", "cp.async"}}, {"pipeline", {"4x3", "p64x3", "8x3"}}});
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c.front(), (Settings{{"copy", "tma"}, {"pipeline", "4x3"}}));
  EXPECT_EQ(c[1], (Settings{{"copy", "tma"}, {"pipeline", "p64x3"}}));
  EXPECT_EQ(c.back(), (Settings{{"copy", "cp.async"}, {"pipeline", "8x3"}}));
  EXPECT_EQ(settings_label(c.back()), "copy=cp.async pipeline=8x3");
  EXPECT_EQ(settings_label({}), "");
}

TEST(ProviderSettings, RowsRecordWhatIsSetAndTheKeysSeeIt) {
  EXPECT_TRUE(settings_fingerprint({}).empty());
  const Fingerprint f = settings_fingerprint({{"l2", "256"}});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f.at("setting.l2"), "256");

  Fingerprint plain = {{"git_commit", "abc"}, {"gpu", "NVIDIA H200"}};
  Fingerprint set = plain;
  set["setting.l2"] = "256";
  EXPECT_EQ(settings_key(plain), "");
  EXPECT_EQ(settings_key(set), "setting.l2=256;");
  EXPECT_NE(fingerprint_key(plain), fingerprint_key(set));  // --resume runs it again
  EXPECT_EQ(fingerprint_difference(plain, set), "settings (none) -> setting.l2=256;");
}

}  // namespace
}  // namespace attnprof
