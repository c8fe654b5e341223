// The composition root's one place for what the layers below are handed: the providers this
// build contains (the registry) and the hooks the point lifecycle runs with (the tracer).
#pragma once

#include <vector>

#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/runner.hpp"

namespace attnprof::cli {

// Every provider of the registry, in table order.
std::vector<Provider*> registered_providers();

// The hooks of the point lifecycle (trace, --ncu): trace_hooks_factory().
HooksFactory point_hooks();

}  // namespace attnprof::cli
