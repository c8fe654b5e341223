// The journal lock: one holder at a time (a second lock, even in this process, is refused at once
// naming the holder's pid and command line), released with its descriptor, and a journal the
// lock created removed again unless the command's work started.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attnprof/journal_lock.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

class JournalLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("attnprof_lock_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl");
    fs::remove(path_);
  }
  void TearDown() override { fs::remove(path_); }
  fs::path path_;
};

TEST_F(JournalLockTest, ASecondLockIsRefusedNamingTheHolder) {
  const JournalLock first(path_);
  try {
    const JournalLock second(path_);
    FAIL() << "two locks on one journal";
  } catch (const JournalBusy& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("journal " + path_.string() + " is in use by pid " +
                        std::to_string(::getpid()) + " ("),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("test_run"), std::string::npos) << what;  // this binary's command line
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST_F(JournalLockTest, ALockHeldByAnotherToolIsSeenToo) {
  { std::ofstream(path_) << "{}\n"; }
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  EXPECT_THROW(JournalLock{path_}, JournalBusy);
  EXPECT_NE(journal_lock_holder(path_).find("pid " + std::to_string(::getpid())),
            std::string::npos);
  ::close(fd);  // released with its descriptor
  EXPECT_NO_THROW(JournalLock{path_});
}

TEST_F(JournalLockTest, AJournalTheLockCreatedIsRemovedUnlessKept) {
  { const JournalLock refused(path_); }
  EXPECT_FALSE(fs::exists(path_));
  {
    JournalLock kept(path_);
    kept.keep();
  }
  EXPECT_TRUE(fs::exists(path_));
  // An existing journal is never removed, kept or not.
  { const JournalLock existing(path_); }
  EXPECT_TRUE(fs::exists(path_));
}

TEST_F(JournalLockTest, ClosingAnotherDescriptorOfTheFileKeepsTheLock) {
  // The trap of fcntl record locks: any close() of the file by the holder drops them.
  const JournalLock lock(path_);
  { std::ifstream(path_).get(); }
  EXPECT_THROW(JournalLock{path_}, JournalBusy);
}

TEST_F(JournalLockTest, AHolderThatCannotBeFoundIsAnotherProcess) {
  { std::ofstream(path_) << "{}\n"; }
  EXPECT_EQ(journal_lock_holder(path_), "another process");
}

}  // namespace
}  // namespace attnprof
