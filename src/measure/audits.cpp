// The audits of engine.hpp that every engine and the point lifecycle share.
#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"

namespace attnprof {

namespace {

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

// "3, 5-41": runs of consecutive numbers as ranges.
std::string ranges_of(const std::vector<int>& n) {
  std::string s;
  for (size_t i = 0; i < n.size();) {
    size_t j = i;
    while (j + 1 < n.size() && n[j + 1] == n[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") +
         (j == i ? fmt::format("{}", n[i]) : fmt::format("{}-{}", n[i], n[j]));
    i = j + 1;
  }
  return s;
}

// The tensors an audit named (input_ledger.hpp's labels: "q", "q (timing copy 3)"), one entry
// per tensor with its timing copies as ranges: "q (and timing copies 1-41)", "k (timing copy 2)".
std::string named(const std::vector<std::string>& labels) {
  static const std::regex copy_label(R"((.*) \(timing copy (\d+)\))");
  struct Tensor {
    std::string name;
    bool first = false;
    std::vector<int> copies;
  };
  std::vector<Tensor> tensors;
  for (const std::string& label : labels) {
    std::smatch m;
    const bool copy = std::regex_match(label, m, copy_label);
    const std::string name = copy ? m[1].str() : label;
    auto it = std::find_if(tensors.begin(), tensors.end(),
                           [&](const Tensor& t) { return t.name == name; });
    if (it == tensors.end()) it = tensors.insert(tensors.end(), Tensor{name, false, {}});
    if (copy) {
      it->copies.push_back(std::stoi(m[2].str()));
    } else {
      it->first = true;
    }
  }
  std::vector<std::string> out;
  for (Tensor& t : tensors) {
    std::sort(t.copies.begin(), t.copies.end());
    const std::string copies =
        fmt::format("timing cop{} {}", t.copies.size() == 1 ? "y" : "ies", ranges_of(t.copies));
    out.push_back(t.copies.empty() ? t.name
                  : t.first        ? fmt::format("{} (and {})", t.name, copies)
                                   : fmt::format("{} ({})", t.name, copies));
  }
  return join(out, ", ");
}

}  // namespace

void require_untouched(PointTensors& tensors, std::string_view after) {
  const TensorAudit a = tensors.audit();
  if (!a.overrun.empty()) {
    throw FaultError(Fault::out_of_bounds,
                     fmt::format("the provider wrote past the end of {} (the guard bytes after it "
                                 "changed; seen after {})",
                                 named(a.overrun), after));
  }
  if (!a.modified.empty()) {
    throw FaultError(Fault::modified_inputs,
                     fmt::format("the provider changed its input {} (seen after {}); a launch must "
                                 "leave its inputs as the harness wrote them",
                                 named(a.modified), after));
  }
}

void require_written(PointTensors& tensors, std::string_view launch) {
  if (const std::vector<std::string> u = tensors.unwritten(); !u.empty()) {
    throw FaultError(Fault::unwritten,
                     fmt::format("{} left outputs holding the poison the harness wrote before it "
                                 "(not written): {}",
                                 launch, join(u, "; ")));
  }
}

}  // namespace attnprof
