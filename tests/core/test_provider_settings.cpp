// Provider settings (src/core/provider_settings.cpp): the table, --set's checks, the variables'
// check, what a row records, and that the resume and compare keys see a setting.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <stdexcept>
#include <string>

#include "attnprof/env.hpp"
#include "attnprof/provider_settings.hpp"

namespace attnprof {
namespace {

// Leaves every declared variable unset, before and after a test.
class ProviderSettings : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const ProviderSetting& s : provider_settings()) unsetenv(std::string(s.variable).c_str());
  }
};

std::string message_of(const std::string& assignment) {
  try {
    apply_setting(assignment);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST_F(ProviderSettings, EveryKnobOfTheCudaProvidersIsDeclaredOnce) {
  EXPECT_EQ(settings_of("cuda.decode").size(), 4u);
  EXPECT_EQ(settings_of("cuda.mla.decode").size(), 2u);
  EXPECT_EQ(settings_of("cuda.flash.sm90").size(), 3u);
  EXPECT_EQ(settings_of("cuda.flash").size(), 1u);
  EXPECT_TRUE(settings_of("cudnn.sdpa").empty());
  for (const ProviderSetting& s : provider_settings()) {
    EXPECT_TRUE(s.variable.starts_with("ATTNPROF_")) << s.variable;
    EXPECT_FALSE(s.help.empty()) << s.provider << "." << s.name;
  }
  EXPECT_THROW(setting_value("cuda.decode", "no-such"), std::logic_error);
}

TEST_F(ProviderSettings, SetChecksTheProviderTheNameAndTheValue) {
  apply_setting("cuda.decode.pipeline=p64x3");
  EXPECT_EQ(setting_value("cuda.decode", "pipeline"), "p64x3");
  EXPECT_STREQ(getenv("ATTNPROF_DECODE_PIPELINE"), "p64x3");  // the workers inherit it
  EXPECT_FALSE(waves_chunk_setting("cuda.decode", "split"));  // unset: the provider's default
  apply_setting("cuda.decode.split=8:2048");
  EXPECT_EQ(setting_value("cuda.decode", "split"), "8:2048");
  EXPECT_EQ(waves_chunk_setting("cuda.decode", "split"), (std::pair<int64_t, int64_t>{8, 2048}));
  EXPECT_NE(message_of("cuda.decode.pipeline=9x9").find("takes one of auto, 4x3"),
            std::string::npos);
  EXPECT_NE(message_of("cuda.decode.split=8:100").find("C >= 256"), std::string::npos);
  EXPECT_NE(message_of("cuda.decode.split=8:2048x").find("W:C"), std::string::npos);
  EXPECT_NE(message_of("cuda.decode.speed=max").find("known: pipeline, copy, l2, split"),
            std::string::npos);
  EXPECT_NE(message_of("cudnn.sdpa.engine=3").find("takes no settings"), std::string::npos);
  EXPECT_NE(message_of("pipeline").find("PROVIDER.NAME=VALUE"), std::string::npos);
  // A refused --set changes nothing.
  EXPECT_EQ(setting_value("cuda.decode", "pipeline"), "p64x3");
  for (const std::string& m : {message_of("cuda.decode.pipeline=9x9"), message_of("x.y=1")}) {
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST_F(ProviderSettings, AVariableWithAValueNoSettingTakesIsRefused) {
  EXPECT_NO_THROW(check_settings());
  setenv("ATTNPROF_MLA_PIPELINE", "fast", 1);
  try {
    check_settings();
    ADD_FAILURE() << "ATTNPROF_MLA_PIPELINE=fast was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ATTNPROF_MLA_PIPELINE=fast: cuda.mla.decode.pipeline "
                                         "takes one of serial64, overlap32"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(ProviderSettings, RowsRecordWhatIsSetAndTheKeysSeeIt) {
  EXPECT_TRUE(settings_fingerprint("cuda.decode").empty());
  apply_setting("cuda.decode.l2=256");
  const Fingerprint f = settings_fingerprint("cuda.decode");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f.at("setting.l2"), "256");
  EXPECT_TRUE(settings_fingerprint("cudnn.sdpa").empty());
  // One variable, two providers: both record it.
  apply_setting("cuda.flash.sm90.deterministic=1");
  EXPECT_EQ(settings_fingerprint("cuda.flash").at("setting.deterministic"), "1");
  EXPECT_EQ(settings_fingerprint("cuda.flash.sm90").at("setting.deterministic"), "1");

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
