#include "attnprof/fault.hpp"

#include <array>
#include <new>
#include <utility>

namespace attnprof {

namespace {

constexpr std::array<std::pair<Fault, std::string_view>, 17> kNames = {{
    {Fault::none, "none"},
    {Fault::invalid, "invalid"},
    {Fault::not_supported, "not_supported"},
    {Fault::oom, "oom"},
    {Fault::sticky_device, "sticky_device"},
    {Fault::device, "device"},
    {Fault::library, "library"},
    {Fault::provider, "provider"},
    {Fault::timeout, "timeout"},
    {Fault::crash, "crash"},
    {Fault::harness, "harness"},
    {Fault::modified_inputs, "modified_inputs"},
    {Fault::out_of_bounds, "out_of_bounds"},
    {Fault::off_stream, "off_stream"},
    {Fault::unwritten, "unwritten"},
    {Fault::stale, "stale"},
    {Fault::implausible, "implausible"},
}};

}  // namespace

std::string_view to_string(Fault f) {
  for (const auto& [fault, name] : kNames) {
    if (fault == f) return name;
  }
  return "?";
}

std::optional<Fault> parse_fault(std::string_view s) {
  for (const auto& [fault, name] : kNames) {
    if (name == s) return fault;
  }
  return std::nullopt;
}

Fault classify(const std::exception& e) {
  if (const auto* f = dynamic_cast<const FaultError*>(&e)) return f->fault();
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return Fault::oom;
  return Fault::provider;
}

std::string fault_reason(const std::exception& e) {
  if (const auto* ns = dynamic_cast<const NotSupported*>(&e)) return ns->reason();
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr)
    return "host allocation failed (std::bad_alloc)";
  return e.what();
}

}  // namespace attnprof
