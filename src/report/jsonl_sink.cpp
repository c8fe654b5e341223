// The JSONL journal: one row per finished point, written with a single write(2) and no user-space
// buffer, so a killed sweep loses at most the point in flight. No fsync: the rows must survive
// the process, not the machine, and an fsync per point would cost more than short points take.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnprof/sink.hpp"

namespace attnprof {
namespace {

[[noreturn]] void io_error(const char* what, const std::filesystem::path& path) {
  throw std::runtime_error(
      fmt::format("cannot {} journal {}: {}", what, path.string(), std::strerror(errno)));
}

class JsonlSink final : public Sink {
 public:
  JsonlSink(const std::filesystem::path& path, bool append) : path_(path) {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    fd_ = ::open(path.c_str(), flags, 0644);
    if (fd_ < 0) io_error("open", path);
    if (append) {
      try {
        repair_tail();
      } catch (...) {
        ::close(fd_);
        throw;
      }
    }
  }
  ~JsonlSink() override {
    if (fd_ >= 0) ::close(fd_);
  }
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;

  void write(const Result& r) override { put(to_json_line(r) + '\n'); }

 private:
  void put(const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        io_error("write", path_);
      }
      done += static_cast<std::size_t>(n);
    }
  }

  // A journal whose writer was killed inside write(2) can end in a partial row (no newline).
  // Appending to it would glue the next row onto that fragment and lose both. A fragment that is
  // valid JSON is a complete row missing only its newline (hand-edited file): terminate it.
  // Anything else cannot be read by anyone: cut it off, so the journal stays a list of rows.
  void repair_tail() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) io_error("stat", path_);
    if (st.st_size == 0) return;
    const int reader = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (reader < 0) io_error("read", path_);
    std::string tail;
    off_t start = st.st_size;
    // Read backwards in blocks until a newline or the start of the file.
    constexpr off_t kBlock = 64 * 1024;
    std::size_t newline = std::string::npos;
    while (start > 0 && newline == std::string::npos) {
      const off_t block = start < kBlock ? start : kBlock;
      start -= block;
      std::string chunk(static_cast<std::size_t>(block), '\0');
      const ssize_t n = ::pread(reader, chunk.data(), chunk.size(), start);
      if (n != static_cast<ssize_t>(block)) {
        ::close(reader);
        io_error("read", path_);
      }
      tail = chunk + tail;
      newline = tail.rfind('\n');
    }
    ::close(reader);
    if (newline == tail.size() - 1) return;  // ends in a newline: nothing to repair
    const std::string fragment = newline == std::string::npos ? tail : tail.substr(newline + 1);
    if (nlohmann::json::accept(fragment)) {
      put("\n");
    } else {
      const off_t keep = st.st_size - static_cast<off_t>(fragment.size());
      if (::ftruncate(fd_, keep) != 0) io_error("truncate", path_);
    }
  }

  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Sink> make_jsonl_sink(const std::filesystem::path& path, bool append) {
  return std::make_unique<JsonlSink>(path, append);
}

}  // namespace attnprof
