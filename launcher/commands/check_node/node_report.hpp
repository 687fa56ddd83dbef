// What check-node prints: one line per finding ("gpudirect check-node: NODE: FAIL ...") and a last
// line with the verdict, or the same as one JSON object (findings, the versions measured, the drain).
#pragma once

#include "check_node/finding.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

struct NodeReport {
  std::string node;
  std::string machine_type;
  std::vector<Finding> findings;
  nlohmann::json facts = nlohmann::json::object();  // versions, GPU names: what the fleet comparison reads
  std::string drain_reason;                         // set when the node fails
  std::string drain_comment;
  bool drained = false;  // --drain ran scontrol
};

std::string report_lines(const NodeReport& report);
nlohmann::json report_json(const NodeReport& report);

}  // namespace gpudirect::launcher::check_node
