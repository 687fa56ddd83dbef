// Where Slurm put a task on its node: the step's GPUs there, the task's local rank, the step's
// tasks there and the node's index. The one reading of these variables: plan_task (so the plugin's
// task_init, `gpudirect-launch doctor` and exec) and the launcher's rendezvous (slurm_step.hpp).
#pragma once

#include <map>
#include <string>

namespace gpudirect {

// The step's GPUs on the node as the plugin read them in slurmstepd before Slurm narrowed them per
// task (under ConstrainDevices a task's own SLURM_STEP_GPUS is narrowed, on 22.05 wrongly). The
// plugin gives it to every task it binds, so the doctor and exec inside the task plan from what the
// plugin planned from.
inline constexpr const char* kStepGpusVariable = "GPUDIRECT_STEP_GPUS";

struct SlurmTaskPlacement {
  int node = 0;        // SLURM_NODEID
  int local_rank = 0;  // SLURM_LOCALID
  // SLURM_LOCAL_TASKS (the plugin passes Slurm's S_JOB_LOCAL_TASK_COUNT so, exec torchrun's
  // LOCAL_WORLD_SIZE), else this node's entry of SLURM_STEP_TASKS_PER_NODE (else
  // SLURM_TASKS_PER_NODE), else the local rank + 1.
  int local_size = 1;
  std::string step_gpus_on_node;  // GPUDIRECT_STEP_GPUS; "" when unknown
};

// Throws std::invalid_argument naming the variable when a value is malformed or the local rank is
// not below the tasks on the node.
SlurmTaskPlacement slurm_task_placement(const std::map<std::string, std::string>& env);

}  // namespace gpudirect
