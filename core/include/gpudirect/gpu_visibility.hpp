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

// The problem when a task shares its node with other tasks of its step (`local_size` > 1) yet is
// bound to every one of the node's `node_gpus` > 1 GPUs (`bound_gpus`): the tasks then all drive
// the same GPUs and NICs, as Slurm 20.11 (every task shown every GPU, no SLURM_GPUS_ON_NODE) led
// an older plugin to do; "" otherwise. plan_task never binds so.
std::string every_gpu_while_sharing_problem(int local_size, int bound_gpus, int node_gpus);

}  // namespace gpudirect
