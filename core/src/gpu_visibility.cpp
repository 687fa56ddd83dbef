#include "gpudirect/gpu_visibility.hpp"

namespace gpudirect {

std::string own_gpus_only_warning(int local_size, int visible_gpus, int own_gpus) {
  if (local_size < 2 || own_gpus < 1 || visible_gpus != own_gpus) return "";
  const std::string tasks = std::to_string(local_size);
  return "each of the node's " + tasks + " tasks sees only its own GPU" + (own_gpus > 1 ? "s" : "") +
         ", so where the node constrains devices (ConstrainDevices=yes, as slurm-gcp's nodes do) NCCL cannot use NVLink between "
         "them and copies through host memory: keep the node's GPUs visible to every task with srun --gpus-per-node=" +
         std::to_string(local_size * own_gpus) + " --ntasks-per-node=" + tasks +
         " instead of --gpus-per-task (on Slurm >= 24.05 --tres-bind=gres/gpu:none does it too)";
}

std::string every_gpu_while_sharing_problem(int local_size, int bound_gpus, int node_gpus) {
  if (local_size < 2 || node_gpus < 2 || bound_gpus != node_gpus) return "";
  return "bound to all " + std::to_string(node_gpus) + " GPUs of the node though the step runs " + std::to_string(local_size) +
         " tasks here: every task drives the same GPUs and NICs. The plugin did not split the node's GPUs by local rank "
         "(Slurm 20.11 shows every task every GPU and sets no SLURM_GPUS_ON_NODE): install a plugin built from this release";
}

}  // namespace gpudirect
