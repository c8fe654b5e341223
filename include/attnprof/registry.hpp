// The one explicit table of providers (src/core/registry.cpp). Adding a provider means: write
// its file, add one line to the table, add its test.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/provider.hpp"

namespace attnprof {

// Every provider known to this build (available or not), in table order. Built once.
const std::vector<std::unique_ptr<Provider>>& all_providers();

// Providers whose name matches any of the comma-separated patterns ("cpu.*", "cuda.naive").
// Throws std::invalid_argument naming a pattern that matches nothing.
std::vector<Provider*> select_providers(std::string_view patterns);

Provider* find_provider(std::string_view name);

// Shell-style glob with '*' and '?'.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace attnprof
