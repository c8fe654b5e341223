// Every test process, and every attnprof it starts, keeps its state in the build tree: the run
// history and the measured ceilings of the user's home are neither read nor written by tests.
// (Set here rather than as a ctest ENVIRONMENT: gtest_discover_tests passes one value only.)
#include <cstdlib>

namespace {

const bool kStateInBuildTree = [] {
  ::setenv("ATTNPROF_HISTORY", ATTNPROF_TEST_STATE_DIR "/history.sqlite", 1);
  ::setenv("XDG_CACHE_HOME", ATTNPROF_TEST_STATE_DIR "/cache", 1);
  return true;
}();

}  // namespace
