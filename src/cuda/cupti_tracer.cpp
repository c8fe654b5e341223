#include "cuda/cupti_tracer.hpp"

#include <cupti.h>
#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>

#include "cuda/cuda_check.hpp"

namespace attnprof::cuda {

namespace {

// CUPTI hands completed buffers to plain C callbacks with no user pointer, so the records are
// gathered in one process-wide collector: the only global mutable state here, forced by the API.
struct Collector {
  std::mutex mutex;  // guards records (CUPTI may call back from its own thread)
  std::vector<TraceActivity> records;
  std::mutex trace_mutex;  // one capture at a time
  bool registered = false;
};

Collector& collector() {
  static Collector c;
  return c;
}

constexpr size_t kBufferBytes = size_t{8} << 20;  // 8 MiB per buffer: ~30k kernel records
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
    return fmt::format("CUPTI error {}", int(r));
  return s;
}

const char* memcpy_kind_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

// The fields kernel, memcpy and memset records share (timestamps, device, stream, correlation).
template <class Record>
void copy_common(const Record& r, TraceActivity& out) {
  out.start_ns = r.start;
  out.end_ns = r.end;
  out.device_id = r.deviceId;
  out.stream_id = r.streamId;
  out.correlation_id = r.correlationId;
}

// Reads one record. CUDA 13's CONCURRENT_KERNEL records are CUpti_ActivityKernel10; only the
// fields every kernel record version shares are read, so a newer CUPTI's record still parses.
bool parse(const CUpti_Activity* rec, TraceActivity& out) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      out.kind = TraceActivity::Kind::kernel;
      out.name = demangle(k->name);
      copy_common(*k, out);
      out.grid[0] = static_cast<uint32_t>(k->gridX);
      out.grid[1] = static_cast<uint32_t>(k->gridY);
      out.grid[2] = static_cast<uint32_t>(k->gridZ);
      out.block[0] = static_cast<uint32_t>(k->blockX);
      out.block[1] = static_cast<uint32_t>(k->blockY);
      out.block[2] = static_cast<uint32_t>(k->blockZ);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      out.kind = TraceActivity::Kind::memcpy;
      out.name = memcpy_kind_name(m->copyKind);
      copy_common(*m, out);
      out.bytes = m->bytes;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      out.kind = TraceActivity::Kind::memset;
      out.name = "memset";
      copy_common(*m, out);
      out.bytes = m->bytes;
      return true;
    }
    default:
      return false;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<TraceActivity> got;
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    TraceActivity a;
    if (parse(rec, a)) got.push_back(std::move(a));
  }
  std::free(buffer);
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& a : got) c.records.push_back(std::move(a));
}

void disable_all() {
  for (CUpti_ActivityKind k : kKinds) (void)cuptiActivityDisable(k);
}

std::string unavailable(const char* call, CUptiResult r) {
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return fmt::format("unavailable (CUPTI busy: {})", cupti_error(r));
  }
  return fmt::format("unavailable (CUPTI: {} failed: {})", call, cupti_error(r));
}

}  // namespace

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                           std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

TraceCapture trace_activities(const std::function<void()>& work, cudaStream_t stream) {
  Collector& c = collector();
  std::lock_guard<std::mutex> one_at_a_time(c.trace_mutex);
  TraceCapture cap;
  if (!c.registered) {
    const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
      cap.note = unavailable("cuptiActivityRegisterCallbacks", r);
      return cap;
    }
    c.registered = true;
  }
  for (CUpti_ActivityKind k : kKinds) {
    const CUptiResult r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS) {
      disable_all();
      cap.note = unavailable("cuptiActivityEnable", r);
      return cap;
    }
  }
  if (const CUptiResult r = cuptiGetStreamIdEx(nullptr, stream, 0, &cap.stream_id);
      r != CUPTI_SUCCESS) {
    disable_all();
    cap.note = unavailable("cuptiGetStreamIdEx", r);
    return cap;
  }
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.records.clear();
  }

  std::exception_ptr failure;
  try {
    work();
    ATTNPROF_CUDA(cudaDeviceSynchronize());
  } catch (...) {
    failure = std::current_exception();
  }
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_all();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    cap.activities.swap(c.records);
  }
  if (failure) std::rethrow_exception(failure);
  if (flushed != CUPTI_SUCCESS) {
    cap.activities.clear();
    cap.note = unavailable("cuptiActivityFlushAll", flushed);
    return cap;
  }
  std::stable_sort(
      cap.activities.begin(), cap.activities.end(),
      [](const TraceActivity& a, const TraceActivity& b) { return a.start_ns < b.start_ns; });
  cap.available = true;
  return cap;
}

std::vector<KernelRecord> aggregate_kernels(const std::vector<TraceActivity>& activities) {
  std::vector<KernelRecord> out;
  std::map<std::string, size_t> index;
  for (const TraceActivity& a : activities) {
    if (a.kind != TraceActivity::Kind::kernel) continue;
    auto [it, fresh] = index.try_emplace(a.name, out.size());
    if (fresh) out.push_back(KernelRecord{a.name, 0, 0.0});
    KernelRecord& k = out[it->second];
    k.count += 1;
    k.total_us += a.end_ns > a.start_ns ? static_cast<double>(a.end_ns - a.start_ns) * 1e-3 : 0.0;
  }
  return out;
}

}  // namespace attnprof::cuda
