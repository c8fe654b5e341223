// The one explicit table of providers (src/registry/registry.cpp, the composition root of the
// providers: which ones a build contains is decided there, nowhere else). Adding a provider means:
// write its file, add one line to the table, add its test (docs/design.md, "Adding a provider").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"

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

// The providers a run uses when none are named: those that declare themselves in the default set
// (ProviderTraits::in_default_set) for `device`, available here, in table order.
std::vector<Provider*> default_providers(DeviceKind device);

// Shell-style glob with '*' and '?'.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace attnprof
