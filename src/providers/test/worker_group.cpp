// test.group and test.pid: cpu.reference under another name, whose rows say which process ran
// them and with which library path (Run::note()). test.group belongs to a worker group of its
// own ("test", library path kTestGroupLibraryPath), test.pid to the default group, so a sweep of
// both shows that the supervisor runs a group's points in a separate worker, started with the
// group's library path first (the way LibTorch's providers get the venv's libraries). Their
// setting `tag` (a or b) changes nothing but the note, so a test sees that a point's settings
// reach prepare() in the worker that runs it.
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "providers/factories.hpp"

namespace attnprof {
namespace {

class NotingRun final : public Run {
 public:
  NotingRun(std::unique_ptr<Run> inner, std::string tag)
      : inner_(std::move(inner)), tag_(std::move(tag)) {}
  void launch(Stream& stream, const Io& io) override { inner_->launch(stream, io); }
  int64_t workspace_bytes() const override { return inner_->workspace_bytes(); }
  std::string note() const override {
    const char* path = std::getenv("LD_LIBRARY_PATH");
    return fmt::format("pid {}; LD_LIBRARY_PATH {}{}", ::getpid(), path ? path : "",
                       tag_.empty() ? "" : "; tag " + tag_);
  }

 private:
  std::unique_ptr<Run> inner_;
  std::string tag_;
};

class NotingProvider final : public Provider {
 public:
  NotingProvider(std::string name, WorkerGroup group)
      : name_(std::move(name)), group_(std::move(group)), reference_(make_cpu_reference()) {}
  ProviderTraits traits() const override {
    ProviderTraits t = reference_->traits();
    t.name = name_;
    t.description = "test: cpu.reference noting its process and library path (worker group '" +
                    group_.name + "')";
    t.family = Family::test;
    t.settings = {{"tag", {"a", "b"}, 0, "test: named in the row's note; changes nothing else"}};
    return t;
  }
  WorkerGroup worker_group() const override { return group_; }
  Support supports(const Spec& s, const Device& d) const override {
    return reference_->supports(s, d);
  }
  int64_t workspace_estimate(const Spec& s, const Settings& settings) const override {
    return reference_->workspace_estimate(s, settings);
  }
  std::unique_ptr<Run> prepare(const Spec& s, const Device& d, const PrepareContext& c,
                               const Io& io) override {
    return std::make_unique<NotingRun>(reference_->prepare(s, d, c, io),
                                       setting_of(c.settings, "tag"));
  }

 private:
  std::string name_;
  WorkerGroup group_;
  std::unique_ptr<Provider> reference_;
};

}  // namespace

std::unique_ptr<Provider> make_test_group() {
  WorkerGroup group;
  group.name = "test";
  group.library_path = std::string(kTestGroupLibraryPath);
  return std::make_unique<NotingProvider>("test.group", std::move(group));
}

std::unique_ptr<Provider> make_test_pid() {
  return std::make_unique<NotingProvider>("test.pid", WorkerGroup{});
}

}  // namespace attnprof
