// The variables torch.distributed's env:// initialisation reads (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) and the ones torchrun gives its workers besides (LOCAL_RANK, LOCAL_WORLD_SIZE),
// for a task that srun started directly, plus GLOO_SOCKET_IFNAME: the task's own NICs, so that
// Gloo's traffic takes the NICs the binding chose. Every one is ?= : a value the user or torchrun
// set wins (GLOO_SOCKET_IFNAME equal to the environment's GPUDIRECT_NICS was an enclosing task's
// binding, not the user's, and is replaced).
#pragma once

#include "gpudirect/network_profile.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpudirect {

// `env` is the task's environment; without a Slurm step (slurm_step.hpp) only GLOO_SOCKET_IFNAME
// is given, and that only when `interfaces` (netdev names) is not empty. Throws
// std::invalid_argument for a malformed Slurm variable.
std::vector<EnvAction> torch_distributed_env(const std::map<std::string, std::string>& env, const std::vector<std::string>& interfaces);

}  // namespace gpudirect
