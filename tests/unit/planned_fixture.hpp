// A topology fixture loaded and planned as the plugin plans a node, and an A3 Mega task's input,
// shared by the task-setup and task-apply tests.
#pragma once

#include "fixture_path.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"

#include <string>

namespace gpudirect::testing {

struct PlannedNode {
  Topology topology;
  NodePlan plan;
  explicit PlannedNode(const std::string& fixture)
      : topology(load_topology_file(gpudirect::testing::fixture_path(fixture))), plan(plan_node(topology)) {}
};

// Local rank `local` of 8 on an A3 Mega node (a3mega-1, job 42, the TCPXO plugin installed), owning `gpus`.
inline TaskSetupInput a3mega_task(Mode mode, int local, const std::string& gpus) {
  TaskSetupInput in;
  in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
  in.request.mode = mode;
  in.hostname = "a3mega-1";
  in.facts.tcpxo_plugin = true;
  in.env = {{"SLURM_LOCALID", std::to_string(local)},
            {"SLURM_PROCID", std::to_string(local)},
            {"SLURM_LOCAL_TASKS", "8"},
            {"SLURM_STEP_GPUS", gpus},
            {"CUDA_VISIBLE_DEVICES", gpus},
            {"SLURM_GPUS_ON_NODE", "8"},
            {"SLURM_JOB_ID", "42"}};
  in.allowed_cpus = CpuSet::range(0, 207);
  return in;
}

}  // namespace gpudirect::testing
