// `attnprof merge IN... --out OUT`: the journals of one sweep run in shards (`run --shard K/N`)
// joined into one, every point once and every row from one build (merge.hpp).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "attnprof/journal.hpp"
#include "attnprof/merge.hpp"
#include "attnprof/sink.hpp"
#include "cli.hpp"
#include "journal_output.hpp"
#include "output_paths.hpp"

namespace attnprof::cli {

namespace {

struct MergeCliOptions {
  std::vector<std::string> inputs;
  std::string out;
  bool force = false;
  bool mixed = false;
};

int merge_command(const MergeCliOptions& o) {
  std::vector<PathOption> inputs;
  for (const std::string& in : o.inputs) inputs.push_back({"input", in});
  check_output_paths({{"--out", o.out, /*own_rules=*/true}}, inputs);
  std::error_code ec;
  if (std::filesystem::exists(o.out, ec) && !o.force) {
    throw std::invalid_argument(
        fmt::format("--out: {} exists; --force replaces it (nothing was written)", o.out));
  }
  std::vector<MergeInput> journals;
  for (const std::string& in : o.inputs) {
    JournalRows j = read_journal(in);
    if (!j.warning.empty()) warning(j.warning);
    journals.push_back({in, std::move(j.rows)});
  }
  const Merged merged = merge_journals(journals, o.mixed);
  begin_work();
  write_journal_whole(o.out, merged.rows);
  std::string devices;
  for (const std::string& d : merged.devices) devices += (devices.empty() ? "" : ", ") + d;
  fmt::print("merged {} rows of {} journals into {}{}\n", merged.rows.size(), journals.size(),
             o.out, devices.empty() ? "" : fmt::format(" (devices: {})", devices));
  return 0;
}

}  // namespace

Command add_merge_command(CLI::App& app) {
  auto o = std::make_shared<MergeCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "merge", "Join the journals of a sweep run in shards (run --shard K/N) into one");
  sub->add_option("journals", o->inputs, "The shards' JSONL journals")->required();
  sub->add_option("--out", o->out, "The merged journal")->required();
  sub->add_flag("--force", o->force, "Replace an existing --out");
  sub->add_flag("--mixed", o->mixed,
                "Merge shards that measured one device under different environments (BLAS, "
                "threads, host, driver, library versions); each row keeps its own");
  return {sub, [o]() { return merge_command(*o); }};
}

}  // namespace attnprof::cli
