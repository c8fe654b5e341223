#include "journal_output.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "attnprof/sink.hpp"

namespace attnprof::cli {

std::unique_ptr<JournalLock> claim_journal(const JournalClaim& claim) {
  if (claim.path.empty()) return nullptr;
  std::unique_ptr<JournalLock> lock;
  try {
    // Locked before its size is looked at: a journal another run is writing is reported as
    // that, not as a file that exists.
    lock = std::make_unique<JournalLock>(claim.path);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(fmt::format("--out: {}", e.what()));
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(claim.path, ec);
  if (!ec && size > 0 && !claim.resume && !claim.force) {
    throw std::invalid_argument(
        fmt::format("--out {}: the journal exists and is not empty; {}--force replaces it",
                    claim.path, claim.can_resume ? "--resume continues it, " : ""));
  }
  return lock;
}

void write_journal_whole(const std::string& path, const std::vector<Result>& rows) {
  const std::string tmp = path + ".merging";
  {
    std::ofstream file(tmp, std::ios::trunc);
    for (const Result& r : rows) file << to_json_line(r) << '\n';
    file.flush();
    if (!file) throw std::runtime_error(fmt::format("--out: cannot write {}", tmp));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace attnprof::cli
