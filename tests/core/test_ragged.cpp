// Ragged batches (ragged.hpp): the seqlens forms and their one-line errors, the seeded draws, the
// spec's validation, key and label, the FLOP and byte models summed over sequences (against
// brute-force counts), and the grid axis.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "attnprof/grid.hpp"
#include "attnprof/model.hpp"
#include "attnprof/ragged.hpp"
#include "core/row_sample.hpp"

namespace attnprof {
namespace {

Spec ragged(std::string lens, int64_t q_len = 64, int64_t kv_len = 64) {
  Spec s{.batch = 6,
         .q_heads = 4,
         .kv_heads = 2,
         .q_len = q_len,
         .kv_len = kv_len,
         .head_dim = 16,
         .dtype = DType::bf16,
         .mask = Mask{MaskKind::causal_br, 0}};
  s.seqlens = std::move(lens);
  return s;
}

TEST(Ragged, EveryFormParsesAndBadOnesSayWhyInOneLine) {
  for (const char* ok :
       {"uniform:1:8", "uniform:512:512", "zipf:16:4096", "zipf:16:4096:1.5", "100", "7/9/3"})
    EXPECT_FALSE(seqlens_problem(ok)) << ok;
  for (const char* bad : {"", "uniform", "uniform:8", "uniform:9:8", "uniform:0:8", "uniform:1:8:2",
                          "zipf:1:8:0", "zipf:1:8:x", "normal:1:8", "7/0/3", "7//3", "7,9", "-4"}) {
    const auto why = seqlens_problem(bad);
    ASSERT_TRUE(why) << bad;
    EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
    EXPECT_FALSE(why->empty());
  }
  EXPECT_EQ(*seqlens_problem("uniform:9:8"),
            "'uniform:9:8': A and B must be key counts with 1 <= A <= B");
  // Issue 40: a list with a 0 in it names the 0, not the whole list as malformed.
  EXPECT_EQ(*seqlens_problem("7/0/3"), "'7/0/3': a sequence of 0 keys (each count must be >= 1)");
}

TEST(Ragged, DrawsAreSeededByTheTextAloneAndStayInRange) {
  const std::vector<int64_t> a = seqlens_draw("uniform:100:200", 64);
  EXPECT_EQ(a, seqlens_draw("uniform:100:200", 64));
  const std::vector<int64_t> head = seqlens_draw("uniform:100:200", 8);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), a.begin()));  // B8 begins B64
  EXPECT_NE(a, seqlens_draw("uniform:100:201", 64));
  for (int64_t x : a) {
    EXPECT_GE(x, 100);
    EXPECT_LE(x, 200);
  }
  EXPECT_GT(*std::max_element(a.begin(), a.end()) - *std::min_element(a.begin(), a.end()), 50);
  // A power law on [16, 4096]: most sequences short, the mean far above the median.
  std::vector<int64_t> z = seqlens_draw("zipf:16:4096", 1000);
  for (int64_t x : z) {
    EXPECT_GE(x, 16);
    EXPECT_LE(x, 4096);
  }
  std::sort(z.begin(), z.end());
  double mean = 0;
  for (int64_t x : z) mean += double(x) / 1000;
  EXPECT_LT(double(z[500]), 0.6 * mean);
  EXPECT_GT(z.back(), 2000);
  // A list is cycled over the batch.
  EXPECT_EQ(seqlens_draw("7/9/3", 5), (std::vector<int64_t>{7, 9, 3, 7, 9}));
}

TEST(Ragged, QueriesAreEachSequencesLastTokens) {
  const SeqLens prefill = seq_lens(ragged("10/64/1"));
  EXPECT_EQ(prefill.kv, (std::vector<int64_t>{10, 64, 1, 10, 64, 1}));
  EXPECT_EQ(prefill.q, prefill.kv);  // q_len == kv_len: a prefill
  const SeqLens decode = seq_lens(ragged("10/64/1", 1, 64));
  EXPECT_EQ(decode.q, (std::vector<int64_t>(6, 1)));
  const SeqLens chunk = seq_lens(ragged("10/64/1", 16, 64));
  EXPECT_EQ(chunk.q, (std::vector<int64_t>{10, 16, 1, 10, 16, 1}));
  EXPECT_EQ(chunk.q_total(), 54);
  EXPECT_EQ(chunk.kv_total(), 150);
  Spec uniform = ragged("");
  EXPECT_EQ(seq_lens(uniform).q, (std::vector<int64_t>(6, 64)));
}

TEST(Ragged, ValidationNamesTheProblem) {
  EXPECT_TRUE(ragged("uniform:1:64").validate().empty());
  auto only = [](const Spec& s) {
    const auto e = s.validate();
    return e.size() == 1 ? e[0] : "(" + std::to_string(e.size()) + " errors)";
  };
  EXPECT_EQ(only(ragged("8/65")),
            "seqlens 8/65 gives a sequence 65 keys, past kv_len 64 (the longest the "
            "tensors hold)");
  EXPECT_EQ(only(ragged("uniform:x")), "seqlens: 'uniform:x' is not uniform:A:B");
  Spec bwd = ragged("8/16");
  bwd.mode = Mode::bwd;
  EXPECT_EQ(only(bwd),
            "a ragged batch (seqlens) is forward only here (mode bwd needs --seqlens off)");
  Spec longer = ragged("8/16", 128, 64);
  longer.mask = Mask{};
  EXPECT_EQ(only(longer),
            "a ragged batch (seqlens) needs q_len <= kv_len (got 128 > 64): each sequence's "
            "queries are its last tokens");
}

TEST(Ragged, KeyAndLabelCarryTheText) {
  const Spec s = ragged("uniform:512:8192", 8192, 8192);
  EXPECT_NE(s.key().find(".sl-uniform-512-8192"), std::string::npos) << s.key();
  EXPECT_NE(s.label().find(" ragged uniform:512:8192"), std::string::npos) << s.label();
  EXPECT_NE(ragged("8/16").key().find(".sl-8_16"), std::string::npos);
  EXPECT_NE(ragged("8/16").key(), ragged("8/17").key());
  EXPECT_EQ(ragged("").key().find(".sl"), std::string::npos);
}

// The models of a ragged batch are the sums over its sequences, each counted by brute force.
TEST(Ragged, FlopsAndBytesSumOverTheSequences) {
  for (Mask mask : {Mask{}, Mask{MaskKind::causal_tl, 0}, Mask{MaskKind::causal_br, 0},
                    Mask{MaskKind::window, 5}})
    for (int64_t q_len : {1, 16, 64}) {
      Spec s = ragged("uniform:1:64", q_len, 64);
      s.mask = mask;
      const SeqLens l = seq_lens(s);
      double pairs = 0, bytes = 0;
      for (size_t b = 0; b < l.q.size(); ++b) {
        pairs += double(visible_pairs_brute_force(mask, l.q[b], l.kv[b]));
        bytes += min_bytes(sequence_spec(s, l.q[b], l.kv[b]));
      }
      EXPECT_DOUBLE_EQ(forward_flops(s), 2.0 * (16 + 16) * pairs * 4) << to_string(mask);
      EXPECT_DOUBLE_EQ(min_bytes(s), bytes + 8.0 * 6) << to_string(mask);
      EXPECT_LT(forward_flops(s), forward_flops(ragged("", q_len, 64)));
    }
  // Allocated: the padded tensors and the lengths.
  Spec s = ragged("8/16");
  Spec flat = ragged("");
  EXPECT_EQ(io_bytes(s), io_bytes(flat) + 6 * 8);
}

// The host check's rows of a ragged batch are its sequences' own: none in the padding.
TEST(Ragged, CheckedRowsStayInsideEachSequence) {
  const Spec s = ragged("3/64/17", 64, 64);
  const SeqLens l = seq_lens(s);
  for (bool full : {true, false}) {
    VerifyOptions o;
    o.full = full;
    o.full_check_flops = 0;
    const std::vector<RowIndex> rows = rows_to_check(s, o, 9);
    ASSERT_FALSE(rows.empty());
    for (const RowIndex& r : rows) EXPECT_LT(r.i, l.q[size_t(r.b)]) << r.b << " " << r.i;
    if (full) {
      EXPECT_EQ(int64_t(rows.size()), l.q_total() * s.q_heads);
    }
  }
  for (const RowIndex& r : cross_check_rows(s, 9)) EXPECT_LT(r.i, l.q[size_t(r.b)]);
}

TEST(Ragged, TheGridAxisTakesOffAndEveryForm) {
  EXPECT_EQ(parse_seqlens_list("off, uniform:1:8,4/5"),
            (std::vector<std::string>{"", "uniform:1:8", "4/5"}));
  try {
    parse_seqlens_list("off,uniform:8:1");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "'uniform:8:1': A and B must be key counts with 1 <= A <= B");
  }
  GridAxes ax;
  ax.set("seq", "64");
  ax.set("seqlens", "off, uniform:1:64");
  const std::vector<Spec> specs = expand(ax);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_FALSE(specs[0].ragged());
  EXPECT_EQ(specs[1].seqlens, "uniform:1:64");
  const Preset p = parse_preset("[[series]]\nseq = 64\nseqlens = [\"off\", \"zipf:1:64\"]\n", "x");
  ASSERT_EQ(p.series.size(), 1u);
  EXPECT_EQ(p.series[0].values("seqlens"), (std::vector<std::string>{"", "zipf:1:64"}));
  EXPECT_THROW(parse_preset("[[series]]\nseqlens = true\n", "x"), std::invalid_argument);
}

}  // namespace
}  // namespace attnprof
