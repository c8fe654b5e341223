#include "attnprof/result.hpp"

namespace attnprof {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::passed:
      return "passed";
    case Status::incorrect:
      return "incorrect";
    case Status::not_supported:
      return "not_supported";
    case Status::oom:
      return "oom";
    case Status::failed:
      return "failed";
    case Status::timeout:
      return "timeout";
    case Status::skipped:
      return "skipped";
  }
  return "?";
}

std::optional<Status> parse_status(std::string_view s) {
  for (Status st : {Status::passed, Status::incorrect, Status::not_supported, Status::oom,
                    Status::failed, Status::timeout, Status::skipped}) {
    if (to_string(st) == s) return st;
  }
  return std::nullopt;
}

Status status_of(Fault f) {
  switch (f) {
    case Fault::none:
      return Status::passed;
    case Fault::not_supported:
    case Fault::invalid:  // a combination of the grid that is no problem: not for any provider
      return Status::not_supported;
    case Fault::oom:
      return Status::oom;
    case Fault::timeout:
      return Status::timeout;
    case Fault::unwritten:  // verdicts on the outputs or the figures: the work ran, wrongly
    case Fault::stale:
    case Fault::implausible:
      return Status::incorrect;
    default:
      return Status::failed;
  }
}

}  // namespace attnprof
