// merge_journals (merge.hpp): rows kept in input order, devices listed, a point twice refused,
// two builds refused, rows that carry no build (refused before a worker saw them) not compared,
// one device under two environments refused unless mixed.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "attnprof/merge.hpp"

namespace attnprof {
namespace {

Result row(const std::string& provider, int64_t seq, const std::string& device,
           const std::string& commit) {
  Result r;
  r.provider = provider;
  r.spec.q_len = r.spec.kv_len = seq;
  r.device = device;
  if (!commit.empty()) r.env["git_commit"] = commit;
  return r;
}

std::string error_of(const std::vector<MergeInput>& in) {
  try {
    (void)merge_journals(in);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Merge, KeepsOrderListsDevicesAndRefusesRepeatsAndOtherBuilds) {
  const MergeInput a{"a.jsonl",
                     {row("cpu.naive", 16, "H200 #0", "abc"), row("cpu.naive", 32, "H200 #0", "")}};
  const MergeInput b{
      "b.jsonl", {row("cpu.naive", 48, "H200 #1", "abc"), row("cpu.flash", 16, "H200 #1", "abc")}};
  const Merged m = merge_journals({a, b});
  ASSERT_EQ(m.rows.size(), 4u);
  EXPECT_EQ(m.rows[2].spec.q_len, 48);
  EXPECT_EQ(m.devices, (std::vector<std::string>{"H200 #0", "H200 #1"}));
  const MergeInput again{"c.jsonl", {row("cpu.naive", 32, "H200 #2", "abc")}};
  EXPECT_NE(error_of({a, b, again}).find("has a row in a.jsonl (row 2) and in c.jsonl (row 1)"),
            std::string::npos)
      << error_of({a, b, again});
  const MergeInput other{"d.jsonl", {row("cpu.naive", 64, "H200 #2", "def")}};
  EXPECT_NE(error_of({a, other})
                .find("a.jsonl and d.jsonl come from different builds "
                      "(git_commit 'abc' against 'def')"),
            std::string::npos)
      << error_of({a, other});
}

// One device name measured with another BLAS or thread count is not one sweep's device: refused,
// naming the field, unless mixed; two devices may differ.
TEST(Merge, OneDeviceUnderTwoEnvironmentsIsRefusedUnlessMixed) {
  const auto with = [](Result r, const char* field, const char* value) {
    r.env[field] = value;
    return r;
  };
  const MergeInput a{"a.jsonl", {with(row("cpu.naive", 16, "cpu: EPYC", "abc"), "threads", "2")}};
  const MergeInput b{"b.jsonl", {with(row("cpu.naive", 32, "cpu: EPYC", "abc"), "threads", "1")}};
  EXPECT_NE(error_of({a, b}).find("a.jsonl and b.jsonl measured cpu: EPYC in different "
                                  "environments (threads '2' against '1')"),
            std::string::npos)
      << error_of({a, b});
  const MergeInput blas{
      "c.jsonl", {with(row("cpu.naive", 48, "cpu: EPYC", "abc"), "blas", "OpenBLAS 0.3.26")}};
  const MergeInput blas2{
      "d.jsonl", {with(row("cpu.naive", 64, "cpu: EPYC", "abc"), "blas", "OpenBLAS 0.3.21")}};
  EXPECT_NE(error_of({blas, blas2}).find("(blas 'OpenBLAS 0.3.26' against 'OpenBLAS 0.3.21')"),
            std::string::npos)
      << error_of({blas, blas2});
  EXPECT_EQ(merge_journals({a, b}, /*mixed=*/true).rows.size(), 2u);
  const MergeInput other{"e.jsonl",
                         {with(row("cpu.naive", 80, "cpu: Xeon", "abc"), "threads", "1")}};
  EXPECT_EQ(error_of({a, other}), "");
}

}  // namespace
}  // namespace attnprof
