// One reading of `check-node --json`'s verdict, for every command that runs check-node on a node
// and acts on the answer (health before its pairs, supervise on a node it blames).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace gpudirect::launcher {

struct NodeCheckResult {
  std::string node;
  bool ok = true;
  std::string reason;   // check-node's drain reason (XID, PERFORMANCE, unspecified) when it fails
  std::string comment;  // its findings, for the node's comment
  nlohmann::json facts = nlohmann::json::object();
};

// From check-node's --json output; nullopt when it is not that (the node gave no result).
std::optional<NodeCheckResult> node_check_result(const std::string& node, const std::string& json_text);

}  // namespace gpudirect::launcher
