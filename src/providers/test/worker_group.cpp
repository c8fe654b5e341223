// test.group and test.pid: cpu.reference under another name, whose rows say which process ran
// them and with which library path (Run::note()). test.group belongs to a worker group of its
// own ("test", library path kTestGroupLibraryPath), test.pid to the default group, so a sweep of
// both shows that the supervisor runs a group's points in a separate worker, started with the
// group's library path first (the way LibTorch's providers get the venv's libraries).
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "providers/factories.hpp"

namespace attnprof {
namespace {

class NotingRun final : public Run {
 public:
  explicit NotingRun(std::unique_ptr<Run> inner) : inner_(std::move(inner)) {}
  void poison_outputs() override { inner_->poison_outputs(); }
  void launch(Stream& stream) override { inner_->launch(stream); }
  HostOutputs read_outputs() override { return inner_->read_outputs(); }
  int64_t allocated_bytes() const override { return inner_->allocated_bytes(); }
  std::string note() const override {
    const char* path = std::getenv("LD_LIBRARY_PATH");
    return fmt::format("pid {}; LD_LIBRARY_PATH {}", ::getpid(), path ? path : "");
  }

 private:
  std::unique_ptr<Run> inner_;
};

class NotingProvider final : public Provider {
 public:
  NotingProvider(std::string name, WorkerGroup group)
      : name_(std::move(name)), group_(std::move(group)), reference_(make_cpu_reference()) {}
  std::string name() const override { return name_; }
  std::string description() const override {
    return "test: cpu.reference noting its process and library path (worker group '" + group_.name +
           "')";
  }
  DeviceKind device_kind() const override { return DeviceKind::cpu; }
  WorkerGroup worker_group() const override { return group_; }
  Support supports(const Spec& s, const Device& d) const override {
    return reference_->supports(s, d);
  }
  int64_t estimate_bytes(const Spec& s) const override { return reference_->estimate_bytes(s); }
  std::unique_ptr<Run> prepare(const Spec& s, const Device& d, const PrepareContext& c) override {
    return std::make_unique<NotingRun>(reference_->prepare(s, d, c));
  }

 private:
  std::string name_;
  WorkerGroup group_;
  std::unique_ptr<Provider> reference_;
};

}  // namespace

std::unique_ptr<Provider> make_test_group() {
  return std::make_unique<NotingProvider>("test.group",
                                          WorkerGroup{"test", std::string(kTestGroupLibraryPath)});
}

std::unique_ptr<Provider> make_test_pid() {
  return std::make_unique<NotingProvider>("test.pid", WorkerGroup{});
}

}  // namespace attnprof
