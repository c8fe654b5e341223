// The journal lock is flock(2) on the journal itself, not an fcntl(2) record lock: a record lock
// belongs to the process and is dropped when the process closes *any* descriptor of the file,
// and a run opens its journal more than once (the resume reader, the sink's tail repair). A flock
// belongs to this descriptor alone; it ends when the descriptor is closed, which the kernel does
// for a killed run too, so a crash never leaves a stale lock and there is no lock file to clean.
// flock keeps no owner in the file, but Linux lists every lock in /proc/locks with the pid that
// took it and the file's device and inode; that pid's /proc/<pid>/cmdline names the holder.
#include "attnprof/journal_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "attnprof/command_line.hpp"

namespace attnprof {

namespace {

[[noreturn]] void io_error(const char* what, const std::filesystem::path& path) {
  throw std::runtime_error(
      fmt::format("cannot {} journal {}: {}", what, path.string(), std::strerror(errno)));
}

// The pid of the first lock on the file `st` describes in /proc/locks, 0 when none is listed.
// Lines read "1: FLOCK  ADVISORY  WRITE 4630 fe:00:10953185 0 EOF" (major:minor in hex);
// "1: -> FLOCK ..." lines are waiters. The device is matched where it can be: on overlayfs the
// lock shows the upper layer's device, not the one stat() reports, so an inode match alone is
// the fallback.
int locking_pid(const struct stat& st) {
  std::ifstream in("/proc/locks");
  std::string line;
  int inode_only = 0;
  while (std::getline(in, line)) {
    if (line.find("->") != std::string::npos) continue;
    std::istringstream fields(line);
    std::string id, kind, mode, access, file;
    int pid = 0;
    if (!(fields >> id >> kind >> mode >> access >> pid >> file) || pid <= 0) continue;
    unsigned major_no = 0, minor_no = 0;
    unsigned long long inode = 0;
    if (std::sscanf(file.c_str(), "%x:%x:%llu", &major_no, &minor_no, &inode) != 3) continue;
    if (inode != static_cast<unsigned long long>(st.st_ino)) continue;
    if (major_no == major(st.st_dev) && minor_no == minor(st.st_dev)) return pid;
    if (inode_only == 0) inode_only = pid;
  }
  return inode_only;
}

}  // namespace

std::string journal_lock_holder(const std::filesystem::path& path) {
  struct stat st {};
  const int pid = ::stat(path.c_str(), &st) == 0 ? locking_pid(st) : 0;
  if (pid <= 0) return "another process";
  const std::string command = shell_join(command_line_args(pid));
  return command.empty() ? fmt::format("pid {}", pid) : fmt::format("pid {} ({})", pid, command);
}

JournalLock::JournalLock(const std::filesystem::path& path) : path_(path) {
  // O_EXCL tells whether this lock made the file (and may remove it again); an existing
  // journal is opened read-only: the lock needs a descriptor, not write access.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  created_ = fd_ >= 0;
  if (fd_ < 0 && errno == EEXIST) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) io_error("open", path);
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  const int error = errno;
  ::close(fd_);
  fd_ = -1;
  if (error != EWOULDBLOCK) {
    errno = error;
    io_error("lock", path);
  }
  throw JournalBusy(fmt::format("journal {} is in use by {}; one journal takes one run at a time",
                                path.string(), journal_lock_holder(path)));
}

JournalLock::~JournalLock() {
  if (fd_ < 0) return;
  // Removed while still locked, so no other run can have taken it in between.
  if (created_ && !kept_) ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace attnprof
