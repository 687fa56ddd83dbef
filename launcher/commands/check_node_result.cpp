#include "check_node_result.hpp"

namespace gpudirect::launcher {

std::optional<NodeCheckResult> node_check_result(const std::string& node, const std::string& json_text) {
  const auto json = nlohmann::json::parse(json_text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("ok") || !json["ok"].is_boolean()) return std::nullopt;
  NodeCheckResult result;
  result.node = node;
  result.ok = json["ok"].get<bool>();
  if (json.contains("facts") && json["facts"].is_object()) result.facts = json["facts"];
  if (!result.ok && json.contains("drain") && json["drain"].is_object()) {
    result.reason = json["drain"].value("reason", "unspecified");
    result.comment = json["drain"].value("comment", "");
  }
  return result;
}

}  // namespace gpudirect::launcher
