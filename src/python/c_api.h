/* The C ABI of libattnprof_py.so, the library the Python worker loads with ctypes
 * (python/attnprof/_abi.py is its twin; docs/design.md, "Python providers"). Plain C types
 * only, so any CPython >= 3.10 can call it without rebuilding anything for its version. */
#ifndef ATTNPROF_PYTHON_C_API_H
#define ATTNPROF_PYTHON_C_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNPROF_PY_ABI_VERSION 3

/* One tensor of a set, as the harness holds it (io.hpp TensorView): data null when absent;
 * dtype 0 fp32, 1 fp16, 2 bf16, 3 fp8 e4m3, 4 fp8 e5m2 (the storage: host tensors are fp32);
 * layout 0 bhsd, 1 bshd. Version 3 added the rest:
 * - page_size, block_table: K and V of a paged spec (TensorView::page_size): data is a container
 *   of batch * ceil(len / page_size) pages, each (heads, page_size, dim) for bhsd and
 *   (page_size, heads, dim) for bshd; block_table is (batch, pages_per_seq) int32 page ids in
 *   data's memory. page_size 0 and block_table null: contiguous.
 * - scale: stored value = real value * scale (inputs.hpp fp8_tensor_scale for fp8 storage; 1 for
 *   every other storage). */
typedef struct attnprof_tensor {
  void* data;
  int32_t dtype;
  int32_t layout;
  int64_t batch, heads, len, dim;
  int64_t page_size;
  const int32_t* block_table;
  float scale;
  int32_t reserved; /* 0; keeps the size a multiple of 8 on every ABI */
} attnprof_tensor;

/* The tensors of one set in TensorRole order: q, k, v, d_o, o, lse, dq, dk, dv, sink (the sink
 * logits, Spec::sinks: (1, q_heads, 1, 1) fp32; version 2 added it), then a ragged batch's
 * lengths (Io::seq_q, seq_kv: (batch) int32 in the tensors' memory; null when uniform; version
 * 3 added them). */
typedef struct attnprof_io {
  attnprof_tensor t[10];
  const int32_t* seq_q;
  const int32_t* seq_kv;
} attnprof_io;

/* Sizes the Python side checks its ctypes twins against (_abi.py load). */
#define ATTNPROF_PY_TENSOR_BYTES 72
#define ATTNPROF_PY_IO_BYTES (10 * ATTNPROF_PY_TENSOR_BYTES + 16)

/* Operations (handle: a provider's index for the first three, a run's id after). */
enum {
  ATTNPROF_OP_SUPPORTS = 1, /* json {"spec"} -> {"reason": null | "..."} */
  ATTNPROF_OP_ESTIMATE = 2, /* json {"spec"} -> {"bytes": N} */
  ATTNPROF_OP_PREPARE = 3,  /* json {"spec", "threads"}, sets[0] copy 0 -> {"run": id} */
  ATTNPROF_OP_BIND = 4,     /* sets[0..count) */
  ATTNPROF_OP_LAUNCH = 5,   /* count: the index of the bound set; no reply */
  ATTNPROF_OP_PUBLISH = 6,  /* count: the index of the bound set */
  ATTNPROF_OP_INFO = 7,     /* -> {"workspace_bytes", "untracked_peak_bytes", "note"} */
  ATTNPROF_OP_RELEASE = 8
};

/* Returns 0, or 1 with {"kind": "provider" | "not_supported" | "oom", "message"} in `out`. */
typedef int32_t (*attnprof_callback)(int64_t handle, int32_t op, const char* json,
                                     const attnprof_io* sets, int32_t count, void* stream,
                                     char* out, int64_t capacity);

int32_t attnprof_py_abi_version(void);
/* sizeof(attnprof_tensor) for which 0, sizeof(attnprof_io) for 1 (version 3). */
int64_t attnprof_py_struct_size(int32_t which);

/* Serves the worker protocol on stdin/stdout (`attnprof worker`'s, argv its options: --device,
 * --threads, --parent) for the providers `providers_json` describes (a JSON array of
 * {"traits", "available", "reason", "fingerprint"}), calling `callback` for their operations.
 * Returns the exit code. */
int32_t attnprof_py_serve(int32_t argc, const char* const* argv, const char* providers_json,
                          attnprof_callback callback);

#ifdef __cplusplus
}
#endif

#endif
