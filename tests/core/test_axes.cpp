// The axis table (axes.hpp): every axis reachable as a flag, a preset key and a JSON field, the
// product it drives, and the Python package's Spec holding the same fields.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "attnprof/axes.hpp"
#include "attnprof/grid.hpp"
#include "attnprof/result_json.hpp"

namespace attnprof {
namespace {

TEST(Axes, EveryAxisIsDeclaredWhole) {
  std::set<std::string> keys, flags, json;
  for (const Axis& a : axes()) {
    EXPECT_TRUE(keys.insert(std::string(a.key)).second) << a.key;
    EXPECT_TRUE(flags.insert(std::string(a.flag)).second) << a.flag;
    EXPECT_EQ(find_axis(a.key), &a);
    EXPECT_FALSE(a.help.empty()) << a.key;
    ASSERT_NE(a.parse, nullptr) << a.key;
    ASSERT_NE(a.set, nullptr) << a.key;
    if (!a.fallback.empty()) {
      EXPECT_FALSE(a.parse(a.fallback).empty()) << a.key;
    }
    if (a.json.empty()) {
      // A rule: replaces an axis, one value, no field of its own.
      EXPECT_NE(find_axis(a.replaces), nullptr) << a.key;
      EXPECT_TRUE(a.single) << a.key;
      EXPECT_EQ(a.get, nullptr) << a.key;
    } else {
      EXPECT_TRUE(json.insert(std::string(a.json)).second) << a.json;
      ASSERT_NE(a.get, nullptr) << a.key;
      // The default spec's value reads back through the parser unchanged.
      const std::string v = a.get(Spec{});
      Spec s;
      a.set(s, a.parse(v).at(0));
      EXPECT_EQ(s, Spec{}) << a.key;
    }
  }
  EXPECT_EQ(find_axis("bogus"), nullptr);
}

// A spec's JSON holds exactly the table's fields, each read back to the same spec.
// A spec with every axis off its default (shared_latent aside).
Spec every_axis_set() {
  Spec s;
  s.batch = 3;
  s.q_heads = 8;
  s.kv_heads = 2;
  s.q_len = 5;
  s.kv_len = 70;
  s.head_dim = 96;
  s.v_head_dim = 64;
  s.dtype = DType::bf16;
  s.mask = Mask{MaskKind::window, 7};
  s.mode = Mode::fwd;
  s.layout = Layout::bshd;
  s.scale = 0.1;
  s.page_size = 16;
  s.softcap = 30.5;
  s.sinks = true;
  s.seqlens = "uniform:2:70";
  return s;
}

TEST(Axes, TheRowCodecWritesEveryField) {
  const Spec s = every_axis_set();
  const std::string text = to_json(s).dump();
  for (const Axis& a : axes()) {
    if (!a.json.empty() && a.key != "shared_latent") {
      EXPECT_NE(text.find(fmt::format("\"{}\":", a.json)), std::string::npos) << a.json;
    }
  }
  EXPECT_EQ(spec_from_json(nlohmann::json::parse(text)), s);
  // Fields at their defaults that only a set spec writes are left out.
  const std::string plain = to_json(Spec{}).dump();
  EXPECT_EQ(plain.find("page_size"), std::string::npos);
  EXPECT_EQ(plain.find("seqlens"), std::string::npos);
  EXPECT_NE(plain.find("\"layout\":\"bhsd\""), std::string::npos);
}

// A child process is handed a point as the table's flags (spec_argv): every axis, so expanding
// them back gives the same spec, layout, scale and shared latent included.
TEST(Axes, TheFlagsOfASpecGiveItBack) {
  Spec s = every_axis_set();
  s.shared_latent = true;
  const std::vector<std::string> argv = spec_argv(s);
  ASSERT_EQ(argv.size() % 2, 0u);
  GridAxes ax;
  for (std::size_t i = 0; i < argv.size(); i += 2) {
    const Axis* axis = nullptr;
    for (const Axis& a : axes()) {
      if (a.flag == argv[i]) axis = &a;
    }
    ASSERT_NE(axis, nullptr) << argv[i];
    ax.set(axis->key, argv[i + 1]);
  }
  const std::vector<Spec> back = expand(ax);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0], s);
  const std::string line = fmt::format("{}", fmt::join(argv, " "));
  for (const char* flag : {"--layout bshd", "--scale 0.1", "--shared-latent on"}) {
    EXPECT_NE(line.find(flag), std::string::npos) << line;
  }
}

// Every field of the spec is in its key (which resume, compare, merge and the history database
// match points by) and its label: a new axis without its key part fails here. Each axis's value
// changed alone changes the key.
TEST(Axes, EveryFieldIsInTheKeyAndTheLabel) {
  const std::map<std::string_view, std::string_view> other = {
      {"batch", "3"},      {"heads", "16"},    {"kv_heads", "4"},    {"seq", "77"},
      {"kv_seq", "99"},    {"head_dim", "32"}, {"v_head_dim", "16"}, {"dtype", "bf16"},
      {"mask", "causal"},  {"mode", "bwd"},    {"layout", "bshd"},   {"scale", "0.5"},
      {"page_size", "16"}, {"softcap", "30"},  {"sinks", "on"},      {"shared_latent", "on"},
      {"seqlens", "8/16"}};
  std::set<int> key_at;
  for (const Axis& a : axes()) {
    if (a.json.empty()) continue;  // a rule sets other axes' fields
    ASSERT_NE(a.key_part, nullptr) << a.key;
    EXPECT_TRUE(key_at.insert(a.key_at).second) << a.key << " shares key_at " << a.key_at;
    ASSERT_TRUE(other.contains(a.key)) << a.key << ": give it another value here";
    Spec base;
    base.batch = 2, base.q_heads = 8, base.kv_heads = 8, base.q_len = 64, base.kv_len = 64;
    base.head_dim = 64;
    Spec changed = base;
    a.set(changed, other.at(a.key));
    EXPECT_NE(base.key(), changed.key()) << a.key;
    EXPECT_NE(base.label(), changed.label()) << a.key;
  }
}

// Keys are stored (history, tune files, journals): the table writes them as they always were.
TEST(Axes, KeyAndLabelOfEveryVariant) {
  Spec s;
  s.batch = 4, s.q_heads = 8, s.kv_heads = 2, s.q_len = 1, s.kv_len = 4096, s.head_dim = 576;
  s.v_head_dim = 512, s.dtype = DType::bf16, s.mask = *parse_mask("causal-br");
  s.layout = Layout::bshd, s.page_size = 64, s.scale = 0.125, s.softcap = 30, s.sinks = true;
  s.seqlens = "uniform:512:4096", s.shared_latent = true;
  EXPECT_EQ(s.key(),
            "b4.hq8.hkv2.q1.k4096.d576.dv512.bf16.causal-br.fwd.bshd.p64.s0.125.cap30.sinks"
            ".sl-uniform-512-4096.latent");
  EXPECT_EQ(s.label(),
            "B4 H8/2 Nq1 Nk4096 D576/512 bf16 causal-br fwd bshd scale0.125 paged64 softcap30 "
            "sinks ragged uniform:512:4096 latent");
  Spec plain;
  plain.batch = 1, plain.q_heads = plain.kv_heads = 12, plain.q_len = plain.kv_len = 2048;
  plain.head_dim = 64;
  EXPECT_EQ(plain.key(), "b1.hq12.hkv12.q2048.k2048.d64.dv64.fp16.none.fwd.bhsd");
  EXPECT_EQ(plain.label(), "B1 H12 N2048 D64 fp16 none fwd");
  static constexpr std::string_view kNoLengths[] = {"batch", "seq", "kv_seq"};
  EXPECT_EQ(plain.label_without(kNoLengths), "H12 D64 fp16 none fwd");
}

// The layout is an axis: `--layout bhsd,bshd` (or a preset's layout key) crosses it with the
// rest, and the spec's key and label tell the two apart.
TEST(Axes, LayoutIsAnAxis) {
  GridAxes ax;
  ax.set("seq", "128,256");
  ax.set("layout", "bhsd, bshd");
  const std::vector<Spec> specs = expand(ax);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].layout, Layout::bhsd);
  EXPECT_EQ(specs[1].layout, Layout::bshd);
  EXPECT_EQ(specs[1].q_len, 128);
  EXPECT_NE(specs[0].key(), specs[1].key());
  EXPECT_NE(specs[0].label(), specs[1].label());
  EXPECT_NE(specs[1].label().find(" bshd"), std::string::npos);
  const Preset p = parse_preset("[[series]]\nseq = 64\nlayout = [\"bshd\"]\n", "x");
  EXPECT_EQ(expand(p.series.at(0)).at(0).layout, Layout::bshd);
  try {
    ax.set("layout", "bhsd,nhd");
    FAIL() << "accepted nhd";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "'nhd' is not one of bhsd, bshd");
  }
}

// Setting an axis clears a rule that replaces it; a model sets its axes and resets the rest of
// them, so a model after --softcap 50 does not keep the cap.
TEST(Axes, RulesAndModelsFollowTheTable) {
  GridAxes ax;
  ax.set("tokens", "4k");
  ax.set("seq", "1k,2k");
  EXPECT_EQ(expand(ax).at(1).batch, 2);
  ax.set("batch", "3");
  EXPECT_FALSE(ax.given("tokens"));
  EXPECT_EQ(expand(ax).at(1).batch, 3);
  EXPECT_THROW(ax.set("tokens", "1k,2k"), std::invalid_argument);
  EXPECT_THROW(ax.set("bogus", "1"), std::invalid_argument);
  EXPECT_THROW(ax.set("seq", " "), std::invalid_argument);
  ax.set("softcap", "50");
  apply_model(ax, find_model("llama-3.1-8b"));
  const Spec s = expand(ax).at(0);
  EXPECT_EQ(s.softcap, 0);
  EXPECT_EQ(s.q_heads, 32);
  EXPECT_EQ(s.kv_heads, 8);
}

// python/attnprof/spec.py's dataclass has one field per JSON field of the table.
TEST(Axes, ThePythonSpecHasEveryField) {
  std::ifstream in(std::string(ATTNPROF_TEST_PY_PKG) + "/attnprof/spec.py");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  for (const Axis& a : axes()) {
    if (a.json.empty()) continue;
    EXPECT_NE(text.str().find(fmt::format("\n    {}: ", a.json)), std::string::npos)
        << "python/attnprof/spec.py has no field " << a.json;
  }
}

}  // namespace
}  // namespace attnprof
