// The fleet's configuration compared: each node's driver, CUDA, NCCL and net plugin as check-node
// measured them; where the nodes disagree, the value most nodes have is the fleet's and the others
// are named (RxDM v1.0.20 next to plugin v1.0.15, a newer driver on a few nodes: the mismatches
// users report). Reported, never drained: a minority is not proven wrong.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace gpudirect::launcher::health {

// The facts compared, as check-node's JSON names them.
const std::vector<std::string>& fleet_keys();

struct OddOneOut {
  std::string key;       // "driver_version"
  std::string majority;  // the value most nodes have; "" when no value has more nodes than every other
  std::size_t majority_nodes = 0;
  std::vector<std::pair<std::string, std::string>> nodes;  // (node, its value), those not on the majority
};

// Per key where nodes differ. Nodes without the fact (an empty or missing value) are left out.
std::vector<OddOneOut> odd_ones_out(const std::map<std::string, nlohmann::json>& facts_by_node);

// "node3: driver_version 550.54.15, the fleet's (6 nodes) 550.90.07".
std::vector<std::string> describe(const OddOneOut& odd);
nlohmann::json to_json(const std::vector<OddOneOut>& odd);

}  // namespace gpudirect::launcher::health
