// `attnprof run --gpus all|N|I,J,...`: every GPU of a host at once. One share of the grid per GPU
// (`--shard K/N`: every provider of a shape on one GPU, so their comparison is on one device),
// each run by a child `attnprof run` that sees only its GPU (CUDA_VISIBLE_DEVICES) and writes a
// journal of its own beside --out; their console lines are relayed prefixed by the GPU, a stop
// signal reaches every child, and the journals are merged into --out (attnprof merge's rules:
// each point once, one build) when they end. --resume continues every share's journal.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace attnprof::cli {

// The physical GPU indices `text` names on a host of `device_count` devices: "all", a count N
// (GPUs 0..N-1) or a comma-separated list ("0,2"; "1," is GPU 1 alone). Throws
// std::invalid_argument with a one-line reason.
std::vector<int> parse_gpus(const std::string& text, int device_count);

// The journal of the share that runs on GPU `gpu`: "r.jsonl" -> "r.gpu1.jsonl".
std::string gpu_journal(const std::string& out, int gpu);

// The arguments of share K of N (after the program, "run" first), built from the options `run`
// (the parsed `attnprof run`) was given, each as its first long name and its values, less
// --gpus, --out, --csv, --markdown, --history and --no-history, plus --shard K/N, --out `journal`
// and --no-history (the parent writes those outputs and the history from the merged rows).
std::vector<std::string> gpu_child_args(const CLI::App& run, int k, int n,
                                        const std::string& journal);

// Whether ATTNPROF_TEST_GPU_COUNT=N stands for N devices (the CPU tests): then the children are
// not pinned and run on whatever --device says.
bool gpus_stood_in();
// CUDA devices this process sees (0 without CUDA), or the N that stand in for them.
int visible_gpu_count();

struct GpuRunOptions {
  std::string gpus;  // --gpus
  std::string out, csv, markdown, history;
  bool no_history = false;
  bool resume = false, force = false;
};

// Runs the shares of `run` (the parsed command) and merges them; the exit code (the worst
// child's; 128+N when stopped).
int run_on_gpus(const GpuRunOptions& o, const CLI::App& run);

}  // namespace attnprof::cli
