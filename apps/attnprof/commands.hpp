// Subcommands of the CUDA engine's area, in the pattern of cli.hpp: add_*_command registers the
// subcommand's options and returns the function main() calls when it was given.
#pragma once

#include <string>

#include "cli.hpp"

namespace attnprof {

struct PeaksCommandOptions {
  std::string device = "auto";  // auto (the GPU where one answers, else the CPU), cpu or cuda
  int gpu = 0;                  // CUDA device index
  bool refresh = false;         // measure even when this device's figures are cached
  std::string json_out;         // also write the figures here
  bool force = false;           // replace an existing --json file
};

// `attnprof peaks`: prints the measured ceilings (from the cache, or measured and cached).
// Returns 0; 2 with one line on stderr when it cannot start (no GPU, built without CUDA, a bad
// --json path); 1 when the measurement fails.
int cmd_peaks(const PeaksCommandOptions& options);

}  // namespace attnprof

namespace attnprof::cli {

// main.cpp: commands.push_back(add_peaks_command(app));
Command add_peaks_command(CLI::App& app);

}  // namespace attnprof::cli
