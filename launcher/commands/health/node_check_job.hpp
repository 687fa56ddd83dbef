// Before the pairs, the sweep runs `gpudirect-launch check-node` on every node in one Slurm job
// (one task per node, each writing its JSON to a file of its own); a node that fails it is named
// with check-node's finding and reason and left out of the pairs, so no pair is spent on it.
#pragma once

#include "check_node_result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::health {

struct NodeCheckOptions {
  std::string machine_type;             // check-node --machine-type; "" = no node check
  std::string program;                  // gpudirect-launch as the nodes see it
  std::vector<std::string> check_args;  // more check-node options, as given
  int gpus_per_node = 8;                // the job asks for the node's GPUs (ConstrainDevices hides the others); 0: none
  std::vector<std::string> srun_args;   // health's --srun-arg, as given
  double timeout_s = 300;
};

// srun -N<n> -w LIST --ntasks-per-node=1 --output=WORK/check-node-%N.json ... PROGRAM check-node
// --machine-type T --json ARGS.
std::vector<std::string> node_check_command(const std::vector<std::string>& nodes, const NodeCheckOptions& options,
                                            const std::string& work_dir);
// Where node's JSON lands (srun's %N: the node's short name).
std::string node_check_path(const std::string& work_dir, const std::string& node);

// check-node's JSON is read one way for every command (check_node_result.hpp).
using launcher::node_check_result;
using launcher::NodeCheckResult;

}  // namespace gpudirect::launcher::health
