// The findings a user acts on, right under the answer table: which provider to deploy per kind of
// shape, what binds it, what its memory grows as, the batch to deploy (`report --tune`), and what
// did not pass or stayed noisy. One sentence each, at most kMaxHeadline; everything else is in the
// per-provider detail further down.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnprof/report.hpp"
#include "report/answer.hpp"
#include "report/findings.hpp"

namespace attnprof {

inline constexpr std::size_t kMaxHeadline = 6;

std::vector<Finding> headline_findings(const std::vector<Result>& rows,
                                       const std::vector<ClassAnswer>& answers,
                                       const std::string& baseline,
                                       const std::optional<TuneSummary>& tune);

}  // namespace attnprof
