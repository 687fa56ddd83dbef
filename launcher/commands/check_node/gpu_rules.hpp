// The GPU rules: what NVML read (gpu_state.hpp) against the machine type's expectations and the
// GPUs Slurm's gres says the node has. One rule, one finding per GPU and problem.
#pragma once

#include "check_node/expectations.hpp"
#include "check_node/finding.hpp"
#include "check_node/gpu_state.hpp"

#include <optional>
#include <vector>

namespace gpudirect::launcher::check_node {

// `gres_gpus`: the node's gpu count in Slurm's Gres=, when known.
std::vector<Finding> judge_gpus(const GpuProbe& probe, const Expectations& expected, std::optional<int> gres_gpus);

}  // namespace gpudirect::launcher::check_node
