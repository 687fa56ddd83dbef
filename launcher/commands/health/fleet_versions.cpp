#include "health/fleet_versions.hpp"

#include <algorithm>

namespace gpudirect::launcher::health {
namespace {

std::string text_of(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

}  // namespace

const std::vector<std::string>& fleet_keys() {
  static const std::vector<std::string> keys{"driver_version", "cuda_driver_version", "nccl_version", "net_plugin", "mode"};
  return keys;
}

std::vector<OddOneOut> odd_ones_out(const std::map<std::string, nlohmann::json>& facts_by_node) {
  std::vector<OddOneOut> out;
  for (const std::string& key : fleet_keys()) {
    std::map<std::string, std::size_t> count;
    std::vector<std::pair<std::string, std::string>> values;
    for (const auto& [node, facts] : facts_by_node) {
      if (!facts.is_object() || !facts.contains(key)) continue;
      const std::string value = text_of(facts[key]);
      if (value.empty()) continue;
      ++count[value];
      values.emplace_back(node, value);
    }
    if (count.size() < 2) continue;
    OddOneOut odd;
    odd.key = key;
    const auto top = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    const bool unique_top = std::count_if(count.begin(), count.end(), [&](const auto& c) { return c.second == top->second; }) == 1;
    if (unique_top) {
      odd.majority = top->first;
      odd.majority_nodes = top->second;
    }
    for (const auto& [node, value] : values)
      if (value != odd.majority) odd.nodes.emplace_back(node, value);
    out.push_back(std::move(odd));
  }
  return out;
}

std::vector<std::string> describe(const OddOneOut& odd) {
  std::vector<std::string> lines;
  for (const auto& [node, value] : odd.nodes)
    lines.push_back(node + ": " + odd.key + " " + value +
                    (odd.majority.empty() ? ", and no value is on most nodes"
                                          : ", the fleet's (" + std::to_string(odd.majority_nodes) + " nodes) " + odd.majority));
  return lines;
}

nlohmann::json to_json(const std::vector<OddOneOut>& odd) {
  nlohmann::json out = nlohmann::json::array();
  for (const OddOneOut& o : odd) {
    nlohmann::json nodes = nlohmann::json::object();
    for (const auto& [node, value] : o.nodes) nodes[node] = value;
    out.push_back({{"key", o.key}, {"majority", o.majority}, {"majority_nodes", o.majority_nodes}, {"nodes", nodes}});
  }
  return out;
}

}  // namespace gpudirect::launcher::health
