#include "python/python_info.hpp"

#include <stdexcept>

#include "attnprof/result_json.hpp"

namespace attnprof::python {

std::vector<ProviderInfo> parse_provider_infos(const nlohmann::json& array) {
  if (!array.is_array()) throw std::runtime_error("Python providers: expected a JSON array");
  std::vector<ProviderInfo> out;
  for (const nlohmann::json& j : array) {
    ProviderInfo p;
    p.traits = traits_from_json(j.at("traits"));
    p.available = j.at("available").get<bool>();
    p.reason = j.at("reason").get<std::string>();
    for (const auto& [key, value] : j.at("fingerprint").items())
      p.fingerprint[key] = value.get<std::string>();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace attnprof::python
