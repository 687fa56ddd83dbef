// NCCL moves data between the ranks of a node over NVLink (P2P, CUDA IPC) only when each rank can
// open its peers' GPUs. Under ConstrainDevices (slurm-gcp's nodes) a task's device cgroup holds just
// the GPUs its CUDA_VISIBLE_DEVICES lists, so a step whose tasks each see only their own GPU(s)
// sends intra-node traffic through host memory instead.
#pragma once

#include <string>

namespace gpudirect {

// The warning, naming the srun line that keeps every GPU of the node visible to each task, when
// `local_size` > 1 tasks of the step share the node and this one sees (`visible_gpus`, the entries
// of its CUDA_VISIBLE_DEVICES; 0 when unset) exactly as many GPUs as it owns (`own_gpus`); ""
// otherwise.
std::string own_gpus_only_warning(int local_size, int visible_gpus, int own_gpus);

}  // namespace gpudirect
