#include "python/callback_provider.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnprof/inputs.hpp"
#include "attnprof/result_json.hpp"

namespace attnprof::python {

namespace {

constexpr int64_t kReplyBytes = 1 << 16;

attnprof_tensor to_c(const TensorView& t) {
  attnprof_tensor c{};
  c.data = t.data;
  c.dtype = static_cast<int32_t>(t.storage);
  c.layout = static_cast<int32_t>(t.layout);
  c.batch = t.batch;
  c.heads = t.heads;
  c.len = t.len;
  c.dim = t.dim;
  c.page_size = t.page_size;
  c.block_table = t.block_table;
  // fp8 storage holds the real value times the format's scale (inputs.hpp); host tensors hold
  // real values as fp32.
  c.scale = is_fp8(t.storage) ? fp8_tensor_scale(t.storage == DType::fp8_e4m3 ? 0 : 1) : 1.0f;
  return c;
}

// The ABI's ten tensors: every role, in TensorRole order (the sink logits last).
attnprof_io to_c(const Io& io) {
  attnprof_io out{};
  constexpr size_t kAbiRoles = sizeof(out.t) / sizeof(out.t[0]);
  static_assert(kAbiRoles == kTensorRoles.size() &&
                kTensorRoles[kAbiRoles - 1] == TensorRole::sink);
  for (size_t r = 0; r < kAbiRoles; ++r) out.t[r] = to_c(io[kTensorRoles[r]]);
  out.seq_q = io.seq_q;
  out.seq_kv = io.seq_kv;
  return out;
}

// One call; the reply parsed, or the Python side's fault thrown as the matching error.
class Caller {
 public:
  explicit Caller(attnprof_callback callback) : callback_(callback), reply_(kReplyBytes, '\0') {}

  nlohmann::json call(int64_t handle, int32_t op, const nlohmann::json* request,
                      const attnprof_io* sets = nullptr, int32_t count = 0,
                      void* stream = nullptr) {
    const std::string text = request ? request->dump() : std::string();
    reply_[0] = '\0';
    const int32_t rc = callback_(handle, op, request ? text.c_str() : nullptr, sets, count, stream,
                                 reply_.data(), kReplyBytes);
    const std::string got(reply_.c_str());
    if (rc == 0) return got.empty() ? nlohmann::json::object() : nlohmann::json::parse(got);
    fail(got);
  }

  [[noreturn]] static void fail(const std::string& reply) {
    nlohmann::json j = nlohmann::json::parse(reply, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw std::runtime_error("Python provider failed: " + reply);
    const std::string kind = j.value("kind", "provider");
    const std::string message = j.value("message", "");
    if (kind == "not_supported") throw NotSupported(message);
    if (kind == "oom") throw OutOfMemory(message);
    throw FaultError(Fault::provider, message);
  }

 private:
  attnprof_callback callback_;
  std::string reply_;
};

class CallbackRun final : public Run {
 public:
  CallbackRun(attnprof_callback callback, int64_t id) : caller_(callback), id_(id) {}
  ~CallbackRun() override {
    try {
      caller_.call(id_, ATTNPROF_OP_RELEASE, nullptr);
    } catch (const std::exception& e) {
      fmt::print(stderr, "attnprof python worker: releasing run {}: {}\n", id_, e.what());
    }
  }

  void bind(std::span<const Io> sets) override {
    std::vector<attnprof_io> c_sets;  // Python makes its views during the call
    first_inputs_.clear();
    for (const Io& io : sets) {
      c_sets.push_back(to_c(io));
      first_inputs_.push_back(io.q.data);
    }
    caller_.call(id_, ATTNPROF_OP_BIND, nullptr, c_sets.data(),
                 static_cast<int32_t>(c_sets.size()));
  }
  void launch(Stream& stream, const Io& io) override {
    caller_.call(id_, ATTNPROF_OP_LAUNCH, nullptr, nullptr, index_of(io), stream.native);
  }
  void publish(Stream& stream, const Io& io) override {
    caller_.call(id_, ATTNPROF_OP_PUBLISH, nullptr, nullptr, index_of(io), stream.native);
  }
  int64_t workspace_bytes() const override { return info().value("workspace_bytes", int64_t{0}); }
  int64_t untracked_peak_bytes() const override {
    return info().value("untracked_peak_bytes", int64_t{0});
  }
  std::string note() const override { return info().value("note", std::string()); }

 private:
  // The bound set `io` is (by its Q's address): launches name it by index.
  int32_t index_of(const Io& io) const {
    for (size_t i = 0; i < first_inputs_.size(); ++i)
      if (first_inputs_[i] == io.q.data) return static_cast<int32_t>(i);
    throw FaultError(Fault::harness, "a launch on tensors that were never bound");
  }
  nlohmann::json info() const { return caller_.call(id_, ATTNPROF_OP_INFO, nullptr); }

  mutable Caller caller_;
  int64_t id_;
  std::vector<const void*> first_inputs_;
};

class CallbackProvider final : public Provider {
 public:
  CallbackProvider(int64_t index, ProviderInfo info, attnprof_callback callback)
      : index_(index), info_(std::move(info)), callback_(callback), caller_(callback) {}

  ProviderTraits traits() const override { return info_.traits; }
  Availability availability() const override { return {info_.available, info_.reason}; }
  Fingerprint fingerprint() const override { return info_.fingerprint; }

  Support supports(const Spec& spec, const Device&) const override {
    const nlohmann::json request = {{"spec", to_json(spec)}};
    const nlohmann::json reply = caller_.call(index_, ATTNPROF_OP_SUPPORTS, &request);
    const auto& reason = reply.at("reason");
    return reason.is_null() ? Support::yes() : Support::no(reason.get<std::string>());
  }
  int64_t workspace_estimate(const Spec& spec, const Settings&) const override {
    const nlohmann::json request = {{"spec", to_json(spec)}};
    return caller_.call(index_, ATTNPROF_OP_ESTIMATE, &request).at("bytes").get<int64_t>();
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext& ctx,
                               const Io& io) override {
    const nlohmann::json request = {
        {"spec", to_json(spec)}, {"threads", ctx.threads}, {"settings", ctx.settings}};
    const attnprof_io first = to_c(io);
    void* stream = ctx.stream ? ctx.stream->native : nullptr;
    const nlohmann::json reply =
        caller_.call(index_, ATTNPROF_OP_PREPARE, &request, &first, 1, stream);
    return std::make_unique<CallbackRun>(callback_, reply.at("run").get<int64_t>());
  }

 private:
  int64_t index_;
  ProviderInfo info_;
  attnprof_callback callback_;
  mutable Caller caller_;
};

}  // namespace

std::unique_ptr<Provider> make_callback_provider(int64_t index, ProviderInfo info,
                                                 attnprof_callback callback) {
  return std::make_unique<CallbackProvider>(index, std::move(info), callback);
}

}  // namespace attnprof::python
