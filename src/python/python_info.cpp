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
    // Declared beside the traits (provider.py `settings`), not in the row's traits.
    for (const nlohmann::json& s : j.value("settings", nlohmann::json::array())) {
      p.traits.settings.push_back({s.at("name").get<std::string>(),
                                   s.at("values").get<std::vector<std::string>>(), 0,
                                   s.value("help", std::string())});
    }
    p.available = j.at("available").get<bool>();
    p.reason = j.at("reason").get<std::string>();
    for (const auto& [key, value] : j.at("fingerprint").items())
      p.fingerprint[key] = value.get<std::string>();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace attnprof::python
