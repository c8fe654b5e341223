#include "composition.hpp"

#include "attnprof/registry.hpp"
#include "attnprof/trace.hpp"

namespace attnprof::cli {

std::vector<Provider*> registered_providers() {
  std::vector<Provider*> out;
  for (const auto& p : all_providers()) out.push_back(p.get());
  return out;
}

HooksFactory point_hooks() {
  return trace_hooks_factory();
}

}  // namespace attnprof::cli
