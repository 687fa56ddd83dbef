// The GPUs Slurm hands out on a node, from `scontrol show node -o`'s Gres= (gpu:8,
// gpu:h100:8(S:0-1), gpu:a:4,gpu:b:4): the count the node's NVML must match.
#pragma once

#include <optional>
#include <string>

namespace gpudirect::launcher::check_node {

// nullopt when the text has no Gres= or no gpu in it.
std::optional<int> gres_gpu_count(const std::string& scontrol_show_node);

}  // namespace gpudirect::launcher::check_node
