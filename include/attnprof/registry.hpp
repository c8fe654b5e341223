// The one explicit table of providers (src/registry/registry.cpp, the composition root of the
// providers: which ones a build contains is decided there, nowhere else). Adding a provider means:
// write its file, add one line to the table, add its test (docs/design.md, "Adding a provider").
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// Every provider known to this build (available or not), in table order, then those added.
// Built once.
const std::vector<std::unique_ptr<Provider>>& all_providers();

// Appends providers found at run time (Python providers: attnprof/python.hpp) to the table;
// throws std::invalid_argument when one's name is taken.
void add_providers(std::vector<std::unique_ptr<Provider>> providers);

// Providers whose name matches any of the comma-separated patterns ("cpu.*", "cuda.naive").
// Throws std::invalid_argument naming a pattern that matches nothing.
std::vector<Provider*> select_providers(std::string_view patterns);

Provider* find_provider(std::string_view name);

// Rows of schema 1 declared no traits (only the provider's name): fill them from this build's
// table, where it has a provider of that name. Rows that declare their traits are left alone.
void backfill_traits(std::vector<Result>& rows);

// Why `p` cannot run `spec` on `device`, from what it declares (its traits' variants, forward
// and backward) and its supports(); "" when nothing stands in the way. A Python provider's proxy
// answers supports() with yes: its worker asks Python when the point runs.
std::string default_refusal(const Provider& p, const Spec& spec, const Device& device);

// The default set of a run of `specs` on `device` (`--providers default`, or none named): every
// provider of the device's kind that declares itself eligible (ProviderTraits::in_default_set),
// that `cannot_run` lets run here (""), and that can run at least one valid point of `specs`
// (every eligible one when `specs` is empty), in table order. Eligible ones that can run no point
// are `left_out` with the first point's reason, so a run names them once instead of writing a
// not_supported row per point. Decided from traits and supports(), never from names.
struct DefaultSet {
  std::vector<Provider*> providers;
  std::vector<std::pair<Provider*, std::string>> left_out;
};
DefaultSet default_set(const Device& device, std::span<const Spec> specs,
                       const std::function<std::string(const Provider&)>& cannot_run);

// Shell-style glob with '*' and '?'.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace attnprof
