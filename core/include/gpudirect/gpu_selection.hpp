// Which GPUs a task owns, from what Slurm put in its environment.
//
// Rules, in order:
//  1. CUDA_VISIBLE_DEVICES wins (an empty value counts as unset). Its entries are node-global
//     indices when every one is a member of SLURM_STEP_GPUS (or no SLURM_STEP_GPUS is set);
//     otherwise Slurm numbered them 0..k-1 within the step's GPUs (ConstrainDevices=yes) and they
//     index into SLURM_STEP_GPUS. (Ambiguous case: under ConstrainDevices with step GPUs 2,3,4,5 a
//     task given "2,3" is read as global 2,3. Slurm's own numbering cannot tell them apart.)
//     When it lists every GPU Slurm gave this node's tasks (SLURM_GPUS_ON_NODE, as --gpus-per-node
//     does) and the node runs several tasks, each task takes its local rank's share of them.
//     Slurm 20.11 sets no SLURM_GPUS_ON_NODE and shows every task of a --gpus-per-task step all the
//     step's GPUs: a list that is every one of SLURM_STEP_GPUS counts as the node's then, and each
//     task takes block r of SLURM_GPUS_PER_TASK (when set and the block fits), else its share.
//     "NoDevFiles" (Slurm's value when gres.conf names no device files) means no GPUs.
//     GPU UUIDs (GPU-..., MIG-...) are refused here: plan_task turns them into indices first
//     (gpu_uuid.hpp, through NVML).
//     Slurm 22.05 under ConstrainDevices gives every task of a --gpus-per-task step the step's FIRST
//     k GPUs in SLURM_STEP_GPUS (task 1 of "3,4" gets "3" while its cgroup holds GPU 4; measured,
//     tests/integration/test_node_faults.sh). When the caller knows the step's GPUs on this node
//     (step_gpus_on_node) and the task's list is exactly their first k, a task of local rank r > 0
//     takes the r-th block of k instead. (Ambiguous case: --gpu-bind=map_gpu sending every task to
//     the step's first GPU under ConstrainDevices reads as that bug.)
//  2. Without CUDA_VISIBLE_DEVICES the step's GPUs are split by local rank: a contiguous block each
//     when there are at least as many GPUs as tasks (8 GPUs, 3 tasks: 3,3,2), else local_rank % GPUs.
//     Without any per-task variable (--gpu-bind=none under ConstrainDevices), step_gpus_on_node.
//  3. Without any Slurm GPU variable, the same split over all gpu_count GPUs of the node.
//  4. A node without GPUs (gpu_count 0) gives no GPUs.
// Every chosen index is checked against gpu_count. The result is ascending: positions in PCI bus
// order (Topology::gpus), which is how NVML and Slurm's AutoDetect number GPUs.
#pragma once

#include <string>
#include <vector>

namespace gpudirect {

struct GpuSelectionInput {
  std::string slurm_step_gpus;            // SLURM_STEP_GPUS, else SLURM_JOB_GPUS; "" when unset
  std::string cuda_visible_devices;       // "" when unset
  bool cuda_visible_devices_set = false;  // informational: an empty value is treated as unset
  int gpus_on_node = 0;                   // SLURM_GPUS_ON_NODE; 0 when unset
  int gpus_per_task = 0;                  // the count of SLURM_GPUS_PER_TASK ("2" or "a100:2"); 0 when unset
  int local_rank = 0;                     // SLURM_LOCALID
  int local_size = 1;                     // tasks of this step on this node
  int gpu_count = 0;                      // GPUs in the node's topology
  // SLURM_STEP_GPUS as slurmstepd holds it for the whole step on this node, before Slurm narrows it
  // per task (the plugin reads it in user_init); "" when unknown (doctor, exec).
  std::string step_gpus_on_node;
};

// Throws std::invalid_argument naming the offending variable and value and what to do.
std::vector<int> select_task_gpus(const GpuSelectionInput& input);

// "0,1,2" -> {0,1,2} (order kept); "" -> {}; spaces around items are ignored; duplicates,
// negatives and non-numbers throw std::invalid_argument naming `what`.
std::vector<int> parse_index_list(const std::string& text, const std::string& what);

}  // namespace gpudirect
