#include "output_paths.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace attnprof::cli {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const PathOption& o, const std::string& why) {
  throw std::invalid_argument(fmt::format("{} {}: {}", o.option, o.path, why));
}

// A new file: created and removed again, so that a folder that takes no files (/proc, a
// read-only mount, a full disk's inodes) is found now, not after the sweep.
void probe_create(const PathOption& o) {
  const int fd = ::open(o.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) refuse(o, fmt::format("cannot be created: {}", std::strerror(errno)));
  ::close(fd);
  ::unlink(o.path.c_str());
}

// A device (not a regular file): a write of nothing must succeed (/dev/full refuses any write).
void probe_device(const PathOption& o) {
  const int fd = ::open(o.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) refuse(o, fmt::format("cannot be opened for writing: {}", std::strerror(errno)));
  const ssize_t n = ::write(fd, "", 0);
  const int err = errno;
  ::close(fd);
  if (n < 0) refuse(o, fmt::format("writes to it fail: {}", std::strerror(err)));
}

// The folder must exist and take new files; an existing file must take writes.
void check_writable(const PathOption& o) {
  std::error_code ec;
  const fs::path path(o.path);
  if (fs::is_directory(path, ec)) refuse(o, "is a folder, not a file");
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::exists(folder, ec))
    refuse(o, fmt::format("folder '{}' does not exist", folder.string()));
  if (!fs::is_directory(folder, ec))
    refuse(o, fmt::format("'{}' is not a folder", folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    refuse(o, fmt::format("folder '{}' is not writable", folder.string()));
  }
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) {
    refuse(o, "the file exists and is not writable");
  }
  if (fs::symlink_status(path, ec).type() == fs::file_type::not_found) {
    probe_create(o);
  } else if (fs::is_character_file(path, ec)) {
    probe_device(o);
  }
}

// An existing file a user wrote is replaced only when asked.
void check_not_replacing(const PathOption& o, bool force) {
  std::error_code ec;
  if (force || o.own_rules || !fs::is_regular_file(o.path, ec)) return;
  const auto size = fs::file_size(o.path, ec);
  if (!ec && size > 0) refuse(o, "the file exists; --force replaces it (nothing was written)");
}

// One spelling per file: symlinks and . / .. resolved as far as the path exists. A symlink whose
// target does not exist yet is followed too: writing through it creates that target.
fs::path canonical_form(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : canonical;
}

bool same_file(const std::string& a, const std::string& b) {
  if (canonical_form(a) == canonical_form(b)) return true;
  std::error_code ec;  // hard links: two names, one file
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

}  // namespace

void check_output_paths(const std::vector<PathOption>& outputs,
                        const std::vector<PathOption>& inputs, bool force) {
  std::vector<const PathOption*> given;
  for (const PathOption& o : outputs) {
    if (o.path.empty()) continue;
    check_writable(o);
    for (const PathOption* earlier : given) {
      if (same_file(earlier->path, o.path)) {
        refuse(o, fmt::format("the same file as {} {}", earlier->option, earlier->path));
      }
    }
    for (const PathOption& in : inputs) {
      if (!in.path.empty() && same_file(in.path, o.path)) {
        refuse(o, fmt::format("would overwrite the input {} {}", in.option, in.path));
      }
    }
    check_not_replacing(o, force);
    given.push_back(&o);
  }
}

}  // namespace attnprof::cli
