#include "measure/cuda/cuda_engine.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "measure/cuda/cuda_fingerprint.hpp"
#include "measure/cuda/device_check_kept.hpp"
#include "measure/cuda/device_tensors.hpp"
#include "measure/cuda/device_verify.hpp"
#include "measure/cuda/timing_kernels.hpp"

namespace attnprof::cuda {

Device describe_device(int index) {
  cudaDeviceProp p{};
  ATTNPROF_CUDA(cudaGetDeviceProperties(&p, index));
  Device d;
  d.kind = DeviceKind::cuda;
  d.index = index;
  d.name = p.name;
  d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.l2_bytes = p.l2CacheSize;
  // CUDA 13 dropped cudaDeviceProp::clockRate; the attribute remains (kHz).
  ATTNPROF_CUDA(cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, index));
  return d;
}

CudaEngine::CudaEngine(int device_index) {
  device_.kind = DeviceKind::cuda;
  device_.index = device_index;
  device_.name = fmt::format("cuda:{}", device_index);
  const std::string why = unavailable_reason(device_index);
  if (!why.empty()) {
    availability_ = {false, why};
    fingerprint_ = cuda_fingerprint(device_);
    return;
  }
  try {
    init();
  } catch (const std::exception& e) {
    availability_ = {false,
                     fmt::format("CUDA device {} could not be set up: {}", device_index, e.what())};
  }
  fingerprint_ = cuda_fingerprint(device_);
}

void CudaEngine::init() {
  ATTNPROF_CUDA(cudaSetDevice(device_.index));
  device_ = describe_device(device_.index);

  // Non-blocking: no implicit synchronization with the legacy default stream, so work other
  // code queues there neither waits for nor delays the timed stream.
  ATTNPROF_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  stream_handle_.native = stream_;
  // Read before cold samples: twice the L2 (docs/method.md) plus 1 MiB, in 16-byte units.
  flush_ = DeviceBuffer(2 * device_.l2_bytes + (int64_t{1} << 20), nullptr);
  sink_ = DeviceBuffer(sizeof(uint64_t), nullptr);
  ATTNPROF_CUDA(cudaMemsetAsync(flush_.data(), 0, static_cast<size_t>(flush_.bytes()), stream_));
  clock_ = std::make_unique<SmClock>(device_.sm_count);
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device_.index) != cudaSuccess) bus[0] = '\0';
  power_ = std::make_unique<PowerMeter>(bus);
  for (cudaEvent_t& e : events_) ATTNPROF_CUDA(cudaEventCreate(&e));

  timer_.stream = stream_;
  timer_.launch_stream = &stream_handle_;
  timer_.device = &device_;
  timer_.flush_buffer = flush_.data();
  timer_.flush_bytes = flush_.bytes();
  timer_.sink = sink_.as<uint64_t>();
  timer_.clock = clock_.get();
  timer_.power = power_.get();
  timer_.spin_done = events_[0];
  timer_.start = events_[1];
  timer_.stop = events_[2];

  // Load the engine's own kernels now (CUDA loads modules lazily, at first launch), so that no
  // measurement pays for it.
  launch_spin_ns(1000, stream_);
  launch_read(flush_.data(), flush_.bytes(), sink_.as<uint64_t>(), 0, stream_);
  clock_->start(stream_);
  clock_->stop(stream_);
  ATTNPROF_CUDA(cudaStreamSynchronize(stream_));
}

CudaEngine::~CudaEngine() {
  if (stream_) (void)cudaStreamSynchronize(stream_);
  for (cudaEvent_t e : events_) {
    if (e) (void)cudaEventDestroy(e);
  }
  if (stream_) (void)cudaStreamDestroy(stream_);
}

void CudaEngine::require_available() const {
  if (!availability_.available) throw std::runtime_error(availability_.reason);
}

std::unique_ptr<PointTensors> CudaEngine::allocate(const Spec& spec, bool lse,
                                                   const InputFill& fill) {
  require_available();
  ATTNPROF_CUDA(cudaSetDevice(device_.index));
  drop_kept_unless(spec);  // a reference kept for another shape: its memory back first
  return make_device_tensors(spec, lse, fill, &tracker_);
}

// The device's check; beyond the shared memory its kernels may have, the host's. The cross-check
// compares the device reference's verdict on a stratified sample of rows (and, where it costs
// under ~0.1 s, the first (batch, KV head) group's dK/dV) with the host's fp64; only those rows
// of the outputs are read back for it, and of the device's O and LSE sums only the verdict's
// rows and those (device_check_pick.hpp): at tens of millions of rows the whole copies cost
// seconds per check.
RowChecks CudaEngine::check_outputs(const Spec& spec, PointTensors& tensors, const InputFill& fill,
                                    const VerifyOptions& options, bool cross_check) {
  require_available();
  ATTNPROF_CUDA(cudaSetDevice(device_.index));
  if (const std::string why = device_check_unavailable(spec); !why.empty()) {
    RowChecks host = check_on_host(spec, fill, tensors.read_outputs(), options);
    host.notes.push_back("checked on the host: " + why);
    return host;
  }
  if (!cross_check) return check_on_device(spec, tensors.io(), stream_, {.all = false, .keep = {}});
  const std::vector<RowIndex> rows = cross_check_rows(spec, fill.seed);
  DeviceRows back{.all = false, .keep = {}};
  for (const RowIndex& r : rows) back.keep.push_back(flat_row(spec, r));
  RowChecks device = check_on_device(spec, tensors.io(), stream_, back);
  constexpr double kGroupCrossCheckWork = double(1ull << 27);
  const double group_work = double(spec.group_size()) * double(spec.q_len) * double(spec.kv_len) *
                            double(spec.head_dim + spec.dv());
  std::vector<int64_t> groups;
  if (spec.mode != Mode::fwd && group_work <= kGroupCrossCheckWork) groups.push_back(0);
  const RowChecks host =
      check_rows_on_host(spec, fill, tensors.read_rows(rows, groups), rows, groups);
  device.disagreement = check_disagreement(spec, device, host);
  const double limit = tolerance_for(spec.dtype).output / 100;
  if (!(device.disagreement <= limit)) {
    throw FaultError(Fault::harness,
                     fmt::format("the device reference disagrees with the host's fp64 by {:.3g} "
                                 "in relative error on the cross-checked rows (limit {:.3g})",
                                 device.disagreement, limit));
  }
  return device;
}

TimingResult CudaEngine::measure(Run& run, PointTensors& tensors, const MeasureOptions& options) {
  require_available();
  ATTNPROF_CUDA(cudaSetDevice(device_.index));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream_));
  return measure_on_stream(timer_, run, tensors, options);
}

std::string CudaEngine::poisoned() {
  if (!availability_.available) return "";
  return sticky_error();
}

RowChecks CudaEngine::check_sample(const Spec& spec, PointTensors& tensors, const InputFill& fill) {
  require_available();
  ATTNPROF_CUDA(cudaSetDevice(device_.index));
  const std::vector<RowIndex> rows = fresh_check_rows(spec, fill.seed);
  return check_rows_on_host(spec, fill, tensors.read_rows(rows, {}), rows, {});
}

// The launch runs between two marker kernels on the timed stream (1 us spins, left out of the
// records): a kernel on another stream that starts after the first marker ended and ends before
// the second began ran inside the launch's window, where the timed stream waited for it.
KernelTrace CudaEngine::trace_kernels(Run& run, PointTensors& tensors, bool own_streams) {
  require_available();
  ATTNPROF_CUDA(cudaSetDevice(device_.index));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream_));
  constexpr uint64_t kMarkerNs = 1000;
  const TraceCapture cap = trace_activities(
      [&] {
        launch_spin_ns(kMarkerNs, stream_);
        run.launch(stream_handle_, tensors.io());
        launch_spin_ns(kMarkerNs, stream_);
      },
      stream_);
  KernelTrace t;
  t.note = cap.note;
  if (!cap.available) return t;
  std::vector<TraceActivity> ran;  // the activities without the markers
  const TraceActivity* first = nullptr;
  const TraceActivity* last = nullptr;
  for (const TraceActivity& a : cap.activities) {
    if (a.kind != TraceActivity::Kind::kernel || a.stream_id != cap.stream_id) continue;
    if (first == nullptr) first = &a;
    last = &a;
  }
  for (const TraceActivity& a : cap.activities) {
    if (&a != first && &a != last) ran.push_back(a);
  }
  t.audited = first != nullptr && last != nullptr && first != last;
  if (!t.audited) t.note = "streams not audited: CUPTI did not see the window's markers";
  for (const TraceActivity& a : ran) {
    if (a.kind != TraceActivity::Kind::kernel || a.stream_id == cap.stream_id) continue;
    const bool inside = t.audited && a.start_ns >= first->end_ns && a.end_ns <= last->start_ns;
    if (own_streams && inside) continue;
    if (t.off_stream++ == 0) t.off_stream_first = a.name;
  }
  t.kernels = aggregate_kernels(ran);
  return t;
}

}  // namespace attnprof::cuda

namespace attnprof {

std::unique_ptr<Engine> make_cuda_engine(int device_index) {
  return std::make_unique<cuda::CudaEngine>(device_index);
}

}  // namespace attnprof
