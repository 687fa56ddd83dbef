// Which GPUs a task owns, from what Slurm put in its environment.
//
// Rules, in order:
//  1. CUDA_VISIBLE_DEVICES wins. Its entries are node-global indices when every one is a member of
//     SLURM_STEP_GPUS (or no SLURM_STEP_GPUS is set); otherwise Slurm numbered them 0..k-1 within
//     the step's GPUs (ConstrainDevices=yes) and they index into SLURM_STEP_GPUS.
//     When it lists every GPU Slurm gave this node's tasks (SLURM_GPUS_ON_NODE, as --gpus-per-node
//     does) and the node runs several tasks, each task takes its local rank's share of them.
//  2. Without CUDA_VISIBLE_DEVICES the step's GPUs are split by local rank: a contiguous block each
//     when there are at least as many GPUs as tasks, else local_rank % GPUs.
//  3. Without any Slurm GPU variable, the same split over all the node's GPUs.
// Indices are positions in PCI bus order (Topology::gpus), which is how NVML and Slurm number them.
#pragma once

#include <string>
#include <vector>

namespace gpudirect {

struct GpuSelectionInput {
  std::string slurm_step_gpus;       // SLURM_STEP_GPUS, else SLURM_JOB_GPUS; "" when unset
  std::string cuda_visible_devices;  // "" when unset
  bool cuda_visible_devices_set = false;
  int gpus_on_node = 0;              // SLURM_GPUS_ON_NODE; 0 when unset
  int local_rank = 0;
  int local_size = 1;
  int gpu_count = 0;                 // GPUs in the node's topology
};

// Throws std::invalid_argument with the offending variable and value.
std::vector<int> select_task_gpus(const GpuSelectionInput& input);

// "0,1,2" -> {0,1,2}; "" -> {}. Throws std::invalid_argument naming `what`.
std::vector<int> parse_index_list(const std::string& text, const std::string& what);

}  // namespace gpudirect
