// The kept forward reference (device_check_kept.hpp): the inputs' hash, the one entry, and the
// comparison of an O with kept rows.
#include "measure/cuda/device_check_kept.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/audit.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/tensor_audit.hpp"
#include "measure/cuda/check_common.cuh"

namespace attnprof::cuda {

namespace {

constexpr int kThreads = 256;

// The hash of every input byte of the launch (the tensors, the block table, the lengths).
uint64_t inputs_hash(const Spec& spec, const Io& io, cudaStream_t stream) {
  DeviceBuffer acc(sizeof(unsigned long long), nullptr);
  auto* sum = acc.as<unsigned long long>();
  ATTNPROF_CUDA(cudaMemsetAsync(sum, 0, sizeof(unsigned long long), stream));
  uint64_t salt = 0x9e3779b97f4a7c15ull;
  for (const InputRange& p : input_ranges(spec, io)) {
    salt += 0x632be59bd9b4e019ull;
    add_digest(p.data, p.bytes, salt, sum, stream);
  }
  unsigned long long h = 0;
  ATTNPROF_CUDA(cudaMemcpyAsync(&h, sum, sizeof h, cudaMemcpyDeviceToHost, stream));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  return h;
}

// The one kept entry of this process.
struct Kept {
  DeviceBuffer buf;
  std::string key;  // the filled reference's ("Spec::key()|device|hash"); empty: none
  int64_t hits = 0;
  bool in_use = false;  // a KeptSlot's rows point into buf
};
Kept& kept() {
  static Kept k;
  return k;
}

KeptRows rows_in(const DeviceBuffer& buf, int64_t q_rows, int64_t dv) {
  KeptRows r;
  r.o = buf.as<double>();
  r.lse = r.o + q_rows * dv;
  r.ref2 = r.lse + q_rows;
  r.floor = r.ref2 + q_rows;
  return r;
}

bool keeping_disabled() {
  const char* v = std::getenv("ATTNPROF_KEEP_REFERENCE");
  return v != nullptr && std::string_view(v) == "0";
}

// A warp per query row: O against the kept row.
template <class T>
__global__ void compare_kernel(View<T> o, KeptRows kept, ForwardRowSums out, DevMask mask,
                               int64_t q_heads, int64_t q_len, int64_t dv, int64_t rows) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int64_t i = row % q_len, h = (row / q_len) % q_heads, b = row / (q_len * q_heads);
  if (i >= mask.at(b).nq) {  // a ragged batch's padding row: no output
    if (lane != 0) return;
    out.err2[row] = out.ref2[row] = out.max_abs[row] = out.floor[row] = 0;
    if (out.lse) out.lse_err[row] = 0;
    return;
  }
  double e2 = 0, r2 = 0, mx = 0;
  const double* ref = kept.o + row * dv;
  for (int64_t d = lane; d < dv; d += 32) compare(o.at(b, h, i, d), ref[d], e2, r2, mx);
  e2 = warp_sum(e2);
  mx = warp_max(mx);
  if (lane != 0) return;
  out.err2[row] = nan_as_inf(e2);
  out.ref2[row] = kept.ref2[row];
  out.max_abs[row] = mx;
  out.floor[row] = kept.floor[row];
  if (out.lse) out.lse_err[row] = lse_error(out.lse[row], kept.lse[row]);
}

template <class T>
void compare_typed(const Spec& spec, const Io& io, cudaStream_t stream, const KeptRows& kept,
                   const ForwardRowSums& out) {
  const int64_t rows = spec.batch * spec.q_heads * spec.q_len;
  const int64_t blocks = (rows * 32 + kThreads - 1) / kThreads;
  compare_kernel<T><<<unsigned(blocks), kThreads, 0, stream>>>(
      view_of<T>(io.o), kept, out, dev_mask(spec, io), spec.q_heads, spec.q_len, spec.dv(), rows);
  ATTNPROF_CUDA(cudaGetLastError());
}

// The reclaimer DeviceBuffer calls when an allocation fails (device_buffer.hpp).
bool release_kept() {
  Kept& k = kept();
  if (k.buf.bytes() == 0 || k.in_use) return false;
  k.buf = DeviceBuffer();
  k.key.clear();
  return true;
}

}  // namespace

KeptSlot kept_forward(const Spec& spec, const Io& io, cudaStream_t stream) {
  if (spec.mode != Mode::fwd || keeping_disabled()) return {};
  static const bool registered = [] {
    set_memory_reclaimer(&release_kept);
    return true;
  }();
  (void)registered;
  const int64_t q_rows = spec.batch * spec.q_heads * spec.q_len;
  const int64_t bytes = q_rows * (spec.dv() + 3) * int64_t(sizeof(double));
  size_t free_bytes = 0, total = 0;
  ATTNPROF_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (bytes > std::min<int64_t>(kKeptBytes, int64_t(total) / 16)) return {};
  int device = 0;
  ATTNPROF_CUDA(cudaGetDevice(&device));
  KeptSlot slot;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(inputs_hash(spec, io, stream)));
  slot.key = spec.key() + "|dev" + std::to_string(device) + "|" + hash;
  Kept& k = kept();
  if (k.key == slot.key) {
    ++k.hits;
    slot.rows = rows_in(k.buf, q_rows, spec.dv());
    slot.filled = true;
    k.in_use = true;
    slot.hold.reset(&k.in_use);
    return slot;
  }
  k.key.clear();  // the buffer is about to hold other rows
  if (k.buf.bytes() < bytes) {
    k.buf = DeviceBuffer();
    try {
      k.buf = DeviceBuffer(bytes, nullptr);
    } catch (const CudaError& e) {
      if (e.code() != cudaErrorMemoryAllocation) throw;
      (void)cudaGetLastError();  // not sticky: the check goes on without keeping
      return {};
    }
  }
  slot.rows = rows_in(k.buf, q_rows, spec.dv());
  k.in_use = true;
  slot.hold.reset(&k.in_use);
  return slot;
}

void commit_kept(const KeptSlot& slot) {
  if (slot.rows.o == nullptr || slot.filled) return;
  kept().key = slot.key;
}

void drop_kept_unless(const Spec& spec) {
  const std::string& key = kept().key;
  if (key.empty() || key.substr(0, key.find('|')) != spec.key()) (void)release_kept();
}

int64_t kept_hits() {
  return kept().hits;
}

void compare_with_kept(const Spec& spec, const Io& io, cudaStream_t stream, const KeptRows& kept,
                       const ForwardRowSums& out) {
  switch (spec.dtype) {
    case DType::fp32:
      return compare_typed<float>(spec, io, stream, kept, out);
    case DType::fp16:
      return compare_typed<__half>(spec, io, stream, kept, out);
    case DType::bf16:
      return compare_typed<__nv_bfloat16>(spec, io, stream, kept, out);
    case DType::fp8_e4m3:
      return compare_typed<Fp8E4M3>(spec, io, stream, kept, out);
    case DType::fp8_e5m2:
      return compare_typed<Fp8E5M2>(spec, io, stream, kept, out);
  }
}

}  // namespace attnprof::cuda
