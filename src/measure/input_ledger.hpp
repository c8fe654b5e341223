// The bookkeeping of a point's input audits that the host's and the device's tensors share
// (engine.hpp PointTensors::audit, seal_inputs): the digest each input range had when the harness
// wrote it, and what the audits found in timing copies before they were freed.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "attnprof/engine.hpp"

namespace attnprof {

class InputLedger {
 public:
  // The digest input range `name` must keep.
  void expect(std::string_view name, uint64_t digest) { pristine_[std::string(name)] = digest; }
  // The digest `name` must keep; none for a range the harness did not write (yet).
  std::optional<uint64_t> expected(std::string_view name) const {
    const auto it = pristine_.find(name);
    return it == pristine_.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  }
  // The findings of a timing copy about to be freed, kept for the next audit.
  void keep(const TensorAudit& a) {
    freed_.modified.insert(freed_.modified.end(), a.modified.begin(), a.modified.end());
    freed_.overrun.insert(freed_.overrun.end(), a.overrun.begin(), a.overrun.end());
  }
  // What keep() kept, handed over once: the start of the next audit's findings.
  TensorAudit take() { return std::exchange(freed_, {}); }

 private:
  std::map<std::string, uint64_t, std::less<>> pristine_;
  TensorAudit freed_;
};

// How an audit names set `c` of a point: 0 the harness's own (no suffix), then its timing copies.
inline std::string set_label(size_t c) {
  return c == 0 ? std::string() : fmt::format(" (timing copy {})", c);
}

}  // namespace attnprof
