// Points of a grid that cannot exist, e.g. causal-br with q_len > kv_len when --seq and --kv-seq
// are crossed: each gets a not_supported row with Spec::validate()'s reason and is never handed
// to a provider, while the rest of the grid runs. A grid with no valid point is refused instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnprof/spec.hpp"
#include "attnprof/sweep.hpp"

namespace attnprof::cli {

// Why `spec` cannot exist, in one line ("; " between reasons); "" when it is valid.
std::string invalid_reason(const Spec& spec);

// Throws std::invalid_argument "point <label>: <reason>" with the first spec's reason when no
// spec of `specs` is valid (a grid of nothing but impossible points is a mistake, not a sweep).
void require_a_valid_spec(const std::vector<Spec>& specs);

// Runs the valid points on `inner`; answers the invalid ones itself with their not_supported row.
class InvalidPointFilter final : public Executor {
 public:
  explicit InvalidPointFilter(Executor& inner) : inner_(inner) {}

  bool has_engine(DeviceKind kind) const override { return inner_.has_engine(kind); }
  const Fingerprint& fingerprint(DeviceKind kind) override { return inner_.fingerprint(kind); }
  const Fingerprint& fingerprint(const Provider& provider) override {
    return inner_.fingerprint(provider);
  }
  std::optional<Result> run(const Point& point) override;

 private:
  Executor& inner_;
};

}  // namespace attnprof::cli
