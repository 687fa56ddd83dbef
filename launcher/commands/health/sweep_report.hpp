// The sweep's result as an admin reads it (a table per node, the groups, the drain lines) and as
// tools read it (JSON with the same content).
#pragma once

#include "health/block_topology.hpp"
#include "health/sweep_run.hpp"
#include "health/threshold.hpp"
#include "health/verdicts.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace gpudirect::launcher::health {

struct SweepResult {
  std::vector<NodeVerdict> nodes;  // every node asked for, skipped ones included
  std::vector<SweepRun> runs;      // pairs of both passes, then groups
  Threshold threshold;
  std::string machine_type;                                 // --machine-type, empty when not given
  std::vector<std::pair<std::string, std::string>> drains;  // bad node -> reason
  std::map<std::string, std::string> drain_comments;        // node -> the node's comment (check-node's findings)
  nlohmann::json fleet;                                     // --node-check: the nodes whose versions differ (fleet_versions.hpp)
  long long timestamp = 0;                                  // Unix seconds when the sweep ended
  std::vector<Block> blocks;                                // Slurm's block topology; empty without one
};

// "node2 0.41 GB/s, node3 timed out" for one node's pairs.
std::string pair_summary(const SweepResult& result, const NodeVerdict& node);

std::string report_table(const SweepResult& result);
nlohmann::json report_json(const SweepResult& result);

}  // namespace gpudirect::launcher::health
