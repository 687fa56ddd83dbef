// Slurm's per-node task counts, as in SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE:
// "8(x2)" (8 tasks on each of 2 nodes) or "3,1".
#pragma once

#include <string>

namespace gpudirect {

// Tasks on node `node` (SLURM_NODEID). Throws std::invalid_argument for a malformed list or a
// node the list does not cover.
int tasks_on_node(const std::string& per_node, int node);

}  // namespace gpudirect
