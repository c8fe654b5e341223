// `attnprof run --gpus all|N|I,J,...`: every GPU of a host at once. One share of the grid per GPU
// (`--shard K/N`: every provider of a shape on one GPU, so their comparison is on one device),
// each run by a child `attnprof run` that sees only its GPU (CUDA_VISIBLE_DEVICES) and writes a
// journal of its own beside --out; their console lines are relayed prefixed by the GPU, a stop
// signal reaches every child, and the journals are merged into --out (attnprof merge's rules:
// each point once, one build) when they end. --resume continues every share's journal.
#pragma once

#include <string>
#include <vector>

namespace attnprof::cli {

// The physical GPU indices `text` names on a host of `device_count` devices: "all", a count N
// (GPUs 0..N-1) or a comma-separated list ("0,2"; "1," is GPU 1 alone). Throws
// std::invalid_argument with a one-line reason.
std::vector<int> parse_gpus(const std::string& text, int device_count);

// The journal of the share that runs on GPU `gpu`: "r.jsonl" -> "r.gpu1.jsonl".
std::string gpu_journal(const std::string& out, int gpu);

// The child's arguments (after the program): `args` (this run's, without the program) less
// --gpus, --out, --csv, --markdown and --history, plus --shard K/N, --out `journal` and
// --no-history (the parent writes those outputs and the history from the merged rows).
std::vector<std::string> gpu_child_args(const std::vector<std::string>& args, int k, int n,
                                        const std::string& journal);

// CUDA devices this process sees (0 without CUDA). ATTNPROF_TEST_GPU_COUNT=N stands for N
// devices in the CPU tests: then the children are not pinned and run on whatever --device says.
int visible_gpu_count();

struct GpuRunOptions {
  std::string gpus;  // --gpus
  std::string out, csv, markdown, history;
  bool no_history = false;
  bool resume = false, force = false;
};

// Runs the shares and merges them; the exit code (the worst child's; 128+N when stopped).
int run_on_gpus(const GpuRunOptions& o);

}  // namespace attnprof::cli
