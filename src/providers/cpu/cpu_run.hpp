// What the CPU providers (cpu.reference, cpu.naive, cpu.flash) share: the host tensors the
// engine hands them are fp32 (host_tensors.hpp), BLAS limits and threading, and the Run base
// that reports their scratch to the memory tracker.
#pragma once

#include <cstdint>
#include <string>

#include "attnprof/io.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::cpu {

// Sequence b's query rows and keys: a ragged batch's from the harness's lengths (Io::seq_q,
// seq_kv, host memory here), else the spec's.
struct SeqDims {
  int64_t nq = 0, nk = 0;
};
inline SeqDims seq_dims(const Spec& spec, const Io& io, int64_t b) {
  if (io.seq_q == nullptr) return {spec.q_len, spec.kv_len};
  return {io.seq_q[b], io.seq_kv[b]};
}

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

// The loaded OpenBLAS: "OpenBLAS 0.3.21 ... (core Haswell)" (openblas_get_config, corename). The
// kernel set moves every CPU figure (on CPUs it does not know it falls back to slow ones).
std::string openblas_version();

// The shared part of every CPU run: scratch accounting. Derived runs implement launch() over
// the harness's fp32 tensors and report their scratch through add_workspace().
class CpuRun : public Run {
 public:
  CpuRun(const Spec& spec, const PrepareContext& ctx);
  ~CpuRun() override;
  CpuRun(const CpuRun&) = delete;
  CpuRun& operator=(const CpuRun&) = delete;

  int64_t workspace_bytes() const override { return workspace_bytes_; }

 protected:
  // Records `bytes` of scratch allocated by the derived run (reported to the tracker).
  void add_workspace(int64_t bytes);

  Spec spec_;
  int threads_ = 1;  // from PrepareContext::threads

 private:
  MemoryTracker* tracker_ = nullptr;  // not owned; outlives the run (engine-owned)
  int64_t workspace_bytes_ = 0;
};

}  // namespace attnprof::cpu
