// A test provider that is a registered one, wrapped: the inner provider's every answer, and its
// runs handed to a wrapper run that may misbehave (the suites' planted faults and cheats).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "attnprof/registry.hpp"

namespace attnprof::test {

// Forwards everything to the inner run; a subclass overrides what it changes.
class WrappedRun : public Run {
 public:
  explicit WrappedRun(std::unique_ptr<Run> inner) : inner_(std::move(inner)) {}
  void bind(std::span<const Io> sets) override { inner_->bind(sets); }
  void launch(Stream& stream, const Io& io) override { inner_->launch(stream, io); }
  void publish(Stream& stream, const Io& io) override { inner_->publish(stream, io); }
  int64_t workspace_bytes() const override { return inner_->workspace_bytes(); }
  int64_t untracked_peak_bytes() const override { return inner_->untracked_peak_bytes(); }
  std::string note() const override { return inner_->note(); }

 private:
  std::unique_ptr<Run> inner_;
};

// The registered provider `inner` under another name, family test; wrap() makes its runs.
class WrappedProvider : public Provider {
 public:
  WrappedProvider(const std::string& inner, std::string name, std::string description)
      : inner_(find_provider(inner)),
        name_(std::move(name)),
        description_(std::move(description)) {}
  ProviderTraits traits() const override {
    ProviderTraits t = inner_->traits();
    t.name = name_;
    t.description = description_;
    t.family = Family::test;
    return t;
  }
  Availability availability() const override { return inner_->availability(); }
  Support supports(const Spec& s, const Device& d) const override { return inner_->supports(s, d); }
  int64_t workspace_estimate(const Spec& s, const Settings& settings) const override {
    return inner_->workspace_estimate(s, settings);
  }
  std::unique_ptr<Run> prepare(const Spec& s, const Device& d, const PrepareContext& c,
                               const Io& io) override {
    return wrap(inner_->prepare(s, d, c, io), io);
  }

 protected:
  // The run of this provider around the inner provider's, prepared on `io`.
  virtual std::unique_ptr<Run> wrap(std::unique_ptr<Run> inner, const Io& io) = 0;

 private:
  Provider* inner_;
  std::string name_;
  std::string description_;
};

}  // namespace attnprof::test
