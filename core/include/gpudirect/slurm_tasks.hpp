// Slurm's per-node task counts, as in SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE:
// "8(x2)" (8 tasks on each of 2 nodes) or "3,1".
#pragma once

#include <map>
#include <string>

namespace gpudirect {

// Tasks on node `node` (SLURM_NODEID). Throws std::invalid_argument for a malformed list or a
// node the list does not cover.
int tasks_on_node(const std::string& per_node, int node);

// Slurm variable `name` of a task's environment, or nullptr when unset or empty (Slurm exports
// some variables empty, which means the same as unset).
const std::string* slurm_variable(const std::map<std::string, std::string>& env, const std::string& name);

}  // namespace gpudirect
