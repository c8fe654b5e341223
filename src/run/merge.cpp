#include "attnprof/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace attnprof {

Merged merge_journals(const std::vector<MergeInput>& inputs, bool mixed) {
  Merged out;
  // Where each point's row came from: input name and line (1-based, blank lines not counted).
  std::map<std::string, std::pair<const std::string*, size_t>> seen;
  // The first value of each build field, and where it was.
  std::map<std::string, std::pair<std::string, const std::string*>> build;
  // The same for each device's environment fields, keyed by device and field.
  std::map<std::pair<std::string, std::string>, std::pair<std::string, const std::string*>> env;
  for (const MergeInput& in : inputs) {
    for (size_t i = 0; i < in.rows.size(); ++i) {
      const Result& r = in.rows[i];
      const std::string point = r.provider + " " + r.spec.key();
      const auto [it, fresh] = seen.try_emplace(point, &in.name, i + 1);
      if (!fresh) {
        throw std::invalid_argument(fmt::format(
            "merge: {} at {} has a row in {} (row {}) and in {} (row {}); a point belongs to one "
            "shard",
            r.provider, r.spec.label(), *it->second.first, it->second.second, in.name, i + 1));
      }
      for (const char* field : kMergeBuildFields) {
        const auto f = r.env.find(field);
        if (f == r.env.end() || f->second.empty()) continue;
        const auto [b, first] = build.try_emplace(field, f->second, &in.name);
        if (!first && b->second.first != f->second) {
          throw std::invalid_argument(fmt::format(
              "merge: {} and {} come from different builds ({} '{}' against '{}'); merge the "
              "shards of one sweep",
              *b->second.second, in.name, field, b->second.first, f->second));
        }
      }
      // Two GPUs of one model are two devices: the PCI bus id tells them apart.
      std::string device = r.device;
      if (const auto bus = r.env.find("gpu_pci_bus_id"); bus != r.env.end() && !device.empty())
        device += " (" + bus->second + ")";
      for (const char* field : kMergeDeviceFields) {
        const auto f = r.env.find(field);
        if (mixed || device.empty() || f == r.env.end() || f->second.empty()) continue;
        const auto [e, first] = env.try_emplace({device, field}, f->second, &in.name);
        if (!first && e->second.first != f->second) {
          throw std::invalid_argument(fmt::format(
              "merge: {} and {} measured {} in different environments ({} '{}' against '{}'); "
              "merge the shards of one sweep, or --mixed to merge them anyway",
              *e->second.second, in.name, device, field, e->second.first, f->second));
        }
      }
      if (!device.empty() &&
          std::find(out.devices.begin(), out.devices.end(), device) == out.devices.end()) {
        out.devices.push_back(device);
      }
      out.rows.push_back(r);
    }
  }
  return out;
}

}  // namespace attnprof
