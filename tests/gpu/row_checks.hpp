// Shared by the GPU tests of attnprof's own kernels (test_decode.cpp, test_flash.cpp,
// test_mla_decode.cpp): one launch's every row of O and the LSE checked twice, against the host's
// fp64 reference and by the device check, with the counts of rows and LSE entries each must
// cover; and two launches' bits compared.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "attnprof/ragged.hpp"
#include "attnprof/verify.hpp"
#include "engine_test_util.hpp"
#include "measure/cuda/device_verify.hpp"
#include "one_point.hpp"

namespace attnprof::testing {

// Launches `pt` once and expects every row to pass both checks (`note`: the run's own words, in
// the failure message).
inline void expect_rows_pass_both_checks(const Spec& s, const InputFill& fill,
                                         testing_specs::OnePoint& pt, const std::string& note) {
  const HostOutputs out = pt.launch_and_read(process_engine());
  VerifyOptions full;
  full.full = true;
  const RowChecks host = check_on_host(s, fill, out, full);
  const VerifyResult hv = judge_rows(s, host);
  EXPECT_TRUE(verify_passed(hv)) << "host: " << hv.detail << " (" << note << ")";
  EXPECT_EQ(host.nonfinite, 0) << host.first_nonfinite;
  auto* stream = static_cast<cudaStream_t>(process_engine().stream().native);
  const RowChecks dev = cuda::check_on_device(s, pt.io(), stream, {.all = true, .keep = {}});
  const VerifyResult dv = judge_rows(s, dev);
  EXPECT_TRUE(verify_passed(dv)) << "device: " << dv.detail;
  EXPECT_EQ(dev.rows_checked, seq_lens(s).q_total() * s.q_heads);
  EXPECT_EQ(dev.lse.size(), dev.o.size());  // the LSE is written and checked on every row
}

// Two launches of `pt` write the same bits of O and the LSE: no state carried between launches.
inline void expect_relaunch_bit_identical(testing_specs::OnePoint& pt) {
  const HostOutputs a = pt.launch_and_read(process_engine());
  const HostOutputs b = pt.launch_and_read(process_engine());
  EXPECT_EQ(a.o, b.o);
  EXPECT_EQ(a.lse, b.lse);
}

}  // namespace attnprof::testing
