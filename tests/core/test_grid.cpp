#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnprof/grid.hpp"

namespace attnprof {
namespace {

using V = std::vector<int64_t>;

TEST(Grid, ParsesListsAndRanges) {
  EXPECT_EQ(parse_int_list("64,128"), (V{64, 128}));
  EXPECT_EQ(parse_int_list("64:2048:*2"), (V{64, 128, 256, 512, 1024, 2048}));
  EXPECT_EQ(parse_int_list("512:2048:512"), (V{512, 1024, 1536, 2048}));
  EXPECT_EQ(parse_int_list("1k:8k:*2"), (V{1024, 2048, 4096, 8192}));
  EXPECT_EQ(parse_int_list("100:130:*2"), (V{100}));
  EXPECT_EQ(parse_int_list("1,4:8:2, 16"), (V{1, 4, 6, 8, 16}));
}

TEST(Grid, RejectsBadListsWithOneLine) {
  for (const char* bad :
       {"", "abc", "64:", "64:32:2", "1:8:*1", "1:8:0", "0:8:*2", "1:8:x", "4.5", "1,,2"}) {
    try {
      parse_int_list(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << bad;
    }
  }
}

TEST(Grid, ExpandsTheCartesianProduct) {
  GridAxes ax;
  ax.set("batch", "1,2");
  ax.set("heads", "8");
  ax.set("seq", "128:512:*2");
  ax.set("head_dim", "64,128");
  ax.set("mask", "none, causal");
  const auto specs = expand(ax);
  EXPECT_EQ(specs.size(), 2u * 3 * 2 * 2);
  for (const Spec& s : specs) {
    EXPECT_EQ(s.q_len, s.kv_len);  // no kv_seq: paired
    EXPECT_EQ(s.kv_heads, s.q_heads);
  }
}

// --v-head-dim crosses with --head-dim; a value equal to the head dim is stored as 0 ("same"), so
// a spec's key does not depend on how the same shape was asked for.
TEST(Grid, ValueHeadDimsCrossWithHeadDims) {
  GridAxes ax;
  ax.set("head_dim", "64,128");
  ax.set("v_head_dim", "64,32");
  const auto specs = expand(ax);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].v_head_dim, 0);
  EXPECT_EQ(specs[1].dv(), 32);
  EXPECT_EQ(specs[2].dv(), 64);
  EXPECT_EQ(specs[3].dv(), 32);
  EXPECT_EQ(specs[0].key(), expand(GridAxes{}).front().key());
}

// --shard K/N: shape i to shard i % N; the shards partition the grid in order, sizes within one.
TEST(Grid, ShardsPartitionTheShapesInOrder) {
  GridAxes ax;
  ax.set("seq", "64:4096:*2");
  const auto all = expand(ax);
  for (int64_t n : {1, 2, 3, 7, 9}) {
    std::vector<std::string> seen;
    size_t smallest = all.size(), largest = 0;
    for (int64_t k = 0; k < n; ++k) {
      const auto mine = shard_specs(all, parse_shard(fmt::format("{}/{}", k, n)));
      smallest = std::min(smallest, mine.size());
      largest = std::max(largest, mine.size());
      for (size_t j = 0; j < mine.size(); ++j) {
        EXPECT_EQ(mine[j], all[size_t(k) + j * size_t(n)]);  // shapes k, k + n, ... in order
        seen.push_back(mine[j].key());
      }
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::string> keys;
    for (const Spec& s : all) keys.push_back(s.key());
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(seen, keys) << n;  // every shape once
    EXPECT_LE(largest - smallest, 1u) << n;
  }
  for (const char* bad : {"2/2", "3", "-1/2", "0/0", "1/x", "/2", "1/"}) {
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(parse_shard("3/8").index, 3);
  EXPECT_EQ(parse_shard("3/8").count, 8);
}

TEST(Grid, TokensAndModelDimDeriveBatchAndHeads) {
  GridAxes ax;
  ax.set("tokens", "16k");
  ax.set("model_dim", "2048");
  ax.set("head_dim", "64,128");
  ax.set("seq", "512,16k");
  const auto specs = expand(ax);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].q_heads, 32);
  EXPECT_EQ(specs[0].batch, 32);
  EXPECT_EQ(specs[1].batch, 1);
  EXPECT_EQ(specs[2].q_heads, 16);
}

TEST(Grid, PresetsLoadAndExpand) {
  const Preset fa = load_preset("fa-bench");
  size_t n = 0;
  for (const auto& s : fa.series) n += expand(s).size();
  EXPECT_EQ(n, 2u * 2 * 6);  // D 64/128, causal or not, N 512..16k
  // fa-bench-bwd: the same shapes, backward.
  const Preset bwd = load_preset("fa-bench-bwd");
  const auto bwd_specs = expand(bwd.series.at(0));
  ASSERT_EQ(bwd_specs.size(), 2u * 2 * 6);
  EXPECT_EQ(bwd_specs.front().mode, Mode::bwd);
  EXPECT_EQ(bwd_specs.back().mode, Mode::bwd);
  EXPECT_EQ(bwd_specs.front().batch * bwd_specs.front().q_len, 16384);
  const Preset dec = load_preset("decode");
  const auto specs = expand(dec.series.at(0));
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs.front().q_len, 1);
  EXPECT_EQ(specs.front().kv_len, 1024);
  EXPECT_EQ(specs.back().kv_len, 32768);
  EXPECT_EQ(specs.front().mask.kind, MaskKind::causal_br);
  EXPECT_EQ(specs.front().kv_heads, 8);
  // DeepSeek-V3: prefill at d_qk 192 / d_v 128 (16k tokens per batch), absorbed decode at
  // 576 / 512 on one latent head.
  const Preset ds = load_preset("deepseek-v3");
  ASSERT_EQ(ds.series.size(), 2u);
  const auto prefill = expand(ds.series[0]);
  ASSERT_EQ(prefill.size(), 5u);
  EXPECT_EQ(prefill.front().head_dim, 192);
  EXPECT_EQ(prefill.front().dv(), 128);
  EXPECT_EQ(prefill.front().batch, 16);
  EXPECT_EQ(prefill.back().batch, 1);
  const auto mla = expand(ds.series[1]);
  ASSERT_EQ(mla.size(), 16u);
  EXPECT_EQ(mla.front().dv(), 512);
  EXPECT_EQ(mla.front().kv_heads, 1);
  EXPECT_EQ(mla.back().kv_len, 65536);
  EXPECT_EQ(mla.back().batch, 128);
  // Paged decode: the decode shape, contiguous and in pages of 16 and 64 keys.
  const auto paged = expand(load_preset("paged-decode").series.at(0));
  ASSERT_EQ(paged.size(), 18u);
  EXPECT_EQ(paged[0].page_size, 0);
  EXPECT_EQ(paged[1].page_size, 16);
  EXPECT_EQ(paged[2].page_size, 64);
  EXPECT_EQ(paged[2].kv_len, 1024);
  // Gemma 2 with and without its softcap; GPT-OSS with and without its sinks (the model sets
  // them, the series' axis lists both).
  const auto gemma = expand(load_preset("gemma-2").series.at(0));
  ASSERT_EQ(gemma.size(), 8u);
  EXPECT_EQ(gemma[0].softcap, 0.0);
  EXPECT_EQ(gemma[1].softcap, 50.0);
  EXPECT_EQ(gemma[1].head_dim, 256);
  const auto oss = expand(load_preset("gpt-oss").series.at(0));
  ASSERT_EQ(oss.size(), 16u);
  EXPECT_FALSE(oss[0].sinks);
  EXPECT_TRUE(oss[1].sinks);
  EXPECT_EQ(oss[1].q_heads, 64);
  // Multi-token decode: B 1..128, q 1..16, KV 1k..32k, two head shapes, in bshd.
  const Preset spec = load_preset("spec-decode");
  ASSERT_EQ(spec.series.size(), 2u);
  const auto drafts = expand(spec.series[1]);
  ASSERT_EQ(drafts.size(), 5u * 5 * 6);
  EXPECT_EQ(drafts.front().layout, Layout::bshd);
  EXPECT_EQ(drafts.front().q_heads, 64);
  EXPECT_EQ(drafts.back().q_len, 16);
  EXPECT_EQ(drafts.back().kv_len, 32768);
  const Preset s0 = load_preset("seed-000");
  ASSERT_EQ(s0.series.size(), 2u);
  EXPECT_EQ(expand(s0.series[1]).front().kv_heads, 3);
  for (const auto& name : preset_names()) {
    for (const auto& series : load_preset(name).series) {
      for (const Spec& s : expand(series))
        EXPECT_TRUE(s.validate().empty()) << name << " " << s.label();
    }
  }
}

TEST(Grid, UnknownPresetAndBadTomlAreClearErrors) {
  EXPECT_THROW(load_preset("nope"), std::invalid_argument);
  EXPECT_THROW(parse_preset("name = \"x\"\n", "x"), std::invalid_argument);  // no series
  EXPECT_THROW(parse_preset("[[series]]\nbogus = 1\n", "x"), std::invalid_argument);
  EXPECT_THROW(parse_preset("[[series]]\ndtype = \"fp8\"\n", "x"), std::invalid_argument);
  EXPECT_THROW(parse_preset("[[series]\n", "x"), std::invalid_argument);
}

// The message of parse_preset(text) as the file presets/x.toml, or "" when it parses.
std::string preset_error(const std::string& text) {
  try {
    (void)parse_preset(text, "x", "presets/x.toml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// A misspelt key must not leave the grid silently different from the file, and an empty axis
// must not reach the C++ library (vector::_M_range_check): one line naming file, series, key.
TEST(Grid, UnknownKeysAndEmptyAxesNameTheFileAndTheKey) {
  const std::string series = "[[series]]\nseq = 64\n";
  EXPECT_EQ(preset_error("sequence = 64\n" + series),
            "preset presets/x.toml: unknown top-level key 'sequence' (known: name, description, "
            "providers, [[series]])");
  EXPECT_EQ(preset_error(series + "[[series]]\nhead_dims = 64\n"),
            "preset presets/x.toml: series 2: unknown key 'head_dims' (known: batch, heads, "
            "kv_heads, seq, kv_seq, head_dim, v_head_dim, dtype, mask, mode, layout, scale, "
            "page_size, softcap, sinks, shared_latent, seqlens, tokens, model_dim, model)");
  for (const char* key : {"seq", "batch", "tokens", "model_dim", "dtype", "mask", "model"}) {
    EXPECT_EQ(preset_error(fmt::format("[[series]]\n{} = []\n", key)),
              fmt::format("preset presets/x.toml: series 1: '{}' is empty", key));
  }
  EXPECT_EQ(
      preset_error("[[series]]\nseq = \"\"\n").rfind("preset presets/x.toml: series 1: 'seq': ", 0),
      0u);
  EXPECT_EQ(preset_error("[[series]]\ntokens = [1024, 2048]\n"),
            "preset presets/x.toml: series 1: 'tokens': takes one value (got 2)");
  EXPECT_EQ(preset_error("name = 3\n" + series), "preset presets/x.toml: 'name' must be a string");
  EXPECT_EQ(preset_error("[[series]\n").rfind("preset presets/x.toml: not valid TOML", 0), 0u);
  EXPECT_EQ(preset_error("providers = [\"cpu.naive\"]\n" + series), "");
}

TEST(Grid, ModelShapesAreKnown) {
  // A model's spec: the grid's defaults with the model's axes.
  const auto model_spec = [](const char* name) {
    GridAxes ax;
    apply_model(ax, find_model(name));
    const std::vector<Spec> specs = expand(ax);
    EXPECT_EQ(specs.size(), 1u) << name;
    return specs.at(0);
  };
  const Spec m = model_spec("llama-3.1-8b");
  EXPECT_EQ(m.q_heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  for (const char* name : {"gpt2", "llama-3.2-1b", "mistral-7b", "qwen2.5-7b", "llama-3.1-70b"})
    EXPECT_NO_THROW(find_model(name));
  // MLA: the value head dim differs from the query/key one; 0 means "the same".
  EXPECT_EQ(model_spec("deepseek-v3").v_head_dim, 128);
  EXPECT_EQ(model_spec("deepseek-v3-mla-decode").head_dim, 576);
  EXPECT_EQ(model_spec("deepseek-v3-mla-decode").v_head_dim, 512);
  EXPECT_EQ(model_spec("deepseek-v3-mla-decode").kv_heads, 1);
  EXPECT_EQ(m.v_head_dim, 0);
  EXPECT_EQ(m.softcap, 0);
  EXPECT_FALSE(m.sinks);
  EXPECT_EQ(model_spec("gemma-2-9b").softcap, 50);
  EXPECT_EQ(model_spec("gemma-2-9b").head_dim, 256);
  EXPECT_TRUE(model_spec("gpt-oss-120b").sinks);
  EXPECT_EQ(model_spec("gpt-oss-120b").q_heads, 64);
  EXPECT_EQ(find_model("gpt-oss-120b").value("sinks"), "on");
  EXPECT_EQ(find_model("gpt2").value("softcap"), "");
  EXPECT_EQ(parse_on_off("on"), true);
  EXPECT_EQ(parse_on_off("false"), false);
  EXPECT_FALSE(parse_on_off("yes"));
  EXPECT_THROW(find_model("gpt-5"), std::invalid_argument);
}

}  // namespace
}  // namespace attnprof
