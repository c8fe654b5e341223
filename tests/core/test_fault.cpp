// Typed faults (include/attnprof/fault.hpp): names round-trip, exceptions are classified by type,
// never by their words, and a fault gives the row's status.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "attnprof/fault.hpp"
#include "attnprof/result.hpp"

namespace attnprof {
namespace {

TEST(Fault, NamesRoundTrip) {
  for (Fault f : {Fault::none, Fault::invalid, Fault::not_supported, Fault::oom,
                  Fault::sticky_device, Fault::device, Fault::library, Fault::provider,
                  Fault::timeout, Fault::crash, Fault::harness}) {
    const auto back = parse_fault(to_string(f));
    ASSERT_TRUE(back.has_value()) << to_string(f);
    EXPECT_EQ(*back, f);
  }
  EXPECT_FALSE(parse_fault("sticky").has_value());
}

TEST(Fault, ClassifiedByTypeNotByWords) {
  EXPECT_EQ(classify(NotSupported("no")), Fault::not_supported);
  EXPECT_EQ(classify(OutOfMemory("x")), Fault::oom);
  EXPECT_EQ(classify(std::bad_alloc()), Fault::oom);
  EXPECT_EQ(classify(FaultError(Fault::library, "cuDNN execute: status 3")), Fault::library);
  // Words that sound like a fault do not make one: an untyped error is the provider's.
  EXPECT_EQ(classify(std::runtime_error("cudaErrorIllegalAddress: out of memory, sticky")),
            Fault::provider);
  EXPECT_EQ(fault_reason(NotSupported("head dim 264")), "head dim 264");
  EXPECT_EQ(fault_reason(std::runtime_error("boom")), "boom");
}

TEST(Fault, GivesTheStatus) {
  EXPECT_EQ(status_of(Fault::none), Status::passed);
  EXPECT_EQ(status_of(Fault::not_supported), Status::not_supported);
  EXPECT_EQ(status_of(Fault::invalid), Status::not_supported);
  EXPECT_EQ(status_of(Fault::oom), Status::oom);
  EXPECT_EQ(status_of(Fault::timeout), Status::timeout);
  for (Fault f : {Fault::sticky_device, Fault::device, Fault::library, Fault::provider,
                  Fault::crash, Fault::harness}) {
    EXPECT_EQ(status_of(f), Status::failed) << to_string(f);
  }
}

}  // namespace
}  // namespace attnprof
