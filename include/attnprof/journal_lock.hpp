// One writer per journal: `attnprof run` and `attnprof tune --out` hold an exclusive lock on
// their journal for the whole command, so two runs never interleave torn rows in one file; the
// second one is refused at once, told who holds the journal.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace attnprof {

// The journal is locked by another process; what() names it in one line.
class JournalBusy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JournalLock {
 public:
  // Opens `path` (creating it, empty, when it does not exist) and locks it without waiting.
  // Throws JournalBusy ("journal r.jsonl is in use by pid 12 (attnprof run ...)") when another
  // process holds it, std::runtime_error when it cannot be opened or locked.
  explicit JournalLock(const std::filesystem::path& path);
  // Unlocks. A journal this lock created is removed again unless keep() was called: a command
  // refused after taking the lock leaves no empty file behind.
  ~JournalLock();
  JournalLock(const JournalLock&) = delete;
  JournalLock& operator=(const JournalLock&) = delete;

  // The command's work starts: the journal stays, whatever happens next.
  void keep() { kept_ = true; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool created_ = false;
  bool kept_ = false;
};

// Who holds a lock on `path`: "pid 12 (attnprof run --out r.jsonl)" from /proc/locks and the
// holder's /proc/<pid>/cmdline, or "another process" where that cannot be told (no /proc, a
// holder in another pid namespace).
std::string journal_lock_holder(const std::filesystem::path& path);

}  // namespace attnprof
