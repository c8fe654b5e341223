// The row codec: one Result as JSON and back, the one pair every reader and writer of rows uses
// (the JSONL journal, the history database, the worker protocol). docs/results.md is the schema.
#pragma once

#include <nlohmann/json.hpp>

#include "attnprof/result.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// Fields in schema order.
nlohmann::ordered_json to_json(const Result& r);
// Throws std::runtime_error "malformed journal line: <what>" naming the field, or naming the
// schema_version when the row is of a version this build does not read.
Result result_from_json(const nlohmann::json& j);

// A row's `traits` object on its own (`attnprof list --json` prints them this way), and back
// (Python providers declare theirs so); throws std::runtime_error naming a malformed field.
nlohmann::ordered_json to_json(const ProviderTraits& t);
ProviderTraits traits_from_json(const nlohmann::json& j);

// A row's `spec` object on its own (the protocol sends specs this way).
nlohmann::ordered_json to_json(const Spec& s);
Spec spec_from_json(const nlohmann::json& j);

}  // namespace attnprof
