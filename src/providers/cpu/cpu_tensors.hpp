// Host tensors shared by the CPU providers (cpu.reference, cpu.naive, cpu.flash): inputs
// generated from include/attnprof/inputs.hpp and stored as float (every fp32/fp16/bf16 input
// value is exact in float), outputs as float, and the Run plumbing they all share (NaN poison,
// copies for the verifier, honest byte counts reported to the memory tracker).
#pragma once

#include <cstdint>
#include <vector>

#include "attnprof/provider.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::cpu {

// Where the rows of one (batch, head) slice of a tensor live in its flat, spec-layout storage:
// row `pos` starts at offset + pos * row_stride and its `dim` features are contiguous.
struct SliceView {
  int64_t offset = 0;
  int64_t row_stride = 0;  // elements: dim for bhsd, heads * dim for bshd
};
SliceView slice_view(const Spec& spec, int64_t b, int64_t h, int64_t heads, int64_t len,
                     int64_t dim);

// Every element of input `tensor` of `spec`, in the spec's layout, as float. Runs on `threads`.
std::vector<float> generate_input(const Spec& spec, const PrepareContext& ctx, TensorId tensor);

// Bytes of the float tensors a CPU run of `spec` holds: Q, K, V, O and LSE for the forward,
// plus dO, dQ, dK, dV for backward modes.
int64_t cpu_tensor_bytes(const Spec& spec);

// Worker threads a CPU run uses: `requested` (PrepareContext::threads) clamped to
// [1, work_items].
int cpu_threads(int requested, int64_t work_items);

// Forward providers: largest BLAS dimension and leading dimension must fit an `int` (cblas).
Support check_blas_dims(const Spec& spec);

// Makes every OpenBLAS call single-threaded, once per process. The providers parallelize over
// (batch, head, tile) with OpenMP themselves, and the pthread build of OpenBLAS serializes
// concurrent multi-threaded level-3 calls behind one global lock, which would turn that
// parallelism into oversubscribed, serialized BLAS. The OpenMP build already runs BLAS single-
// threaded inside a parallel region, so this changes nothing there.
void use_single_threaded_blas();

// The shared part of every CPU run: inputs, outputs, poison, read-back and byte accounting.
// Derived runs implement launch() and report their scratch through add_workspace().
class CpuRun : public Run {
 public:
  // Generates inputs (dO only for backward modes) and allocates the outputs of spec.mode; the
  // forward outputs are O and the LSE (B x Hq x Nq). Throws OutOfMemory when allocation fails.
  CpuRun(const Spec& spec, const PrepareContext& ctx);
  ~CpuRun() override;
  CpuRun(const CpuRun&) = delete;
  CpuRun& operator=(const CpuRun&) = delete;

  void poison_outputs() override;
  HostOutputs read_outputs() override;
  int64_t workspace_bytes() const override { return workspace_bytes_; }
  int64_t allocated_bytes() const override { return tensor_bytes_ + workspace_bytes_; }

 protected:
  // Records `bytes` of scratch allocated by the derived run (reported to the tracker).
  void add_workspace(int64_t bytes);

  Spec spec_;
  int threads_ = 1;  // from PrepareContext::threads
  std::vector<float> q_, k_, v_, d_o_;
  std::vector<float> o_, lse_, dq_, dk_, dv_;

 private:
  MemoryTracker* tracker_ = nullptr;  // not owned; outlives the run (engine-owned)
  int64_t tensor_bytes_ = 0;
  int64_t workspace_bytes_ = 0;
};

}  // namespace attnprof::cpu
