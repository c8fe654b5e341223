// Joining the journals of one sweep run in shards (`attnprof run --shard K/N`, one per Slurm task
// or MPI rank, each with its own --out) into one journal that report and compare read as a whole.
#pragma once

#include <string>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof {

struct MergeInput {
  std::string name;  // the journal's path, for messages
  std::vector<Result> rows;
};

struct Merged {
  std::vector<Result> rows;          // every input's rows, in input order
  std::vector<std::string> devices;  // the distinct devices the rows ran on, first seen first
};

// The fingerprint fields that must agree across every row: rows of two builds are not one sweep.
inline constexpr const char* kMergeBuildFields[] = {"attnprof_version", "git_commit", "build_type",
                                                    "compiler"};

// The fingerprint fields that must agree across the rows of one device (its name and PCI bus id):
// one device measured under another BLAS, thread count, host, driver or library version is not
// one sweep's device, and a report of the merge would show one environment for both.
inline constexpr const char* kMergeDeviceFields[] = {"host",   "host_threads", "threads",
                                                     "blas",   "driver",       "cuda_runtime",
                                                     "cublas", "cudnn",        "torch"};

// Throws std::invalid_argument with one line when a point (provider and spec) has a row in two
// places (two inputs, or twice in one), when two rows' builds differ, or (unless `mixed`) when
// two rows of one device differ in a kMergeDeviceFields field (the field and both values named).
// Rows without the field (refused before a worker saw them) are not compared.
Merged merge_journals(const std::vector<MergeInput>& inputs, bool mixed = false);

}  // namespace attnprof
