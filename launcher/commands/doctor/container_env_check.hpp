// Inside a container, the mode's variables against what arrived. The container runtime builds the
// task's environment from the image's and the job's, and the image's own value of a name can win:
// pyxis gives variables the image sets precedence over the task's (NGC images set NCCL_* and
// LD_LIBRARY_PATH), Apptainer does the same for its image's environment, and `apptainer --cleanenv`
// passes none of the job's. The doctor names each variable of the mode that did not arrive as the
// plugin set it, both values, and the fix for the runtime it runs in.
#pragma once

#include "gpudirect/network_profile.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher {

enum class ContainerRuntime { enroot, apptainer, other };

// Which runtime made the container whose root is `root` and whose environment is `env`: Apptainer
// sets APPTAINER_CONTAINER (SINGULARITY_CONTAINER before it) and keeps /.singularity.d in its
// images; enroot leaves /.enroot, an /etc/rc or /etc/rc.local of its import (container_check.hpp),
// or its lock file /.lock, which every container it starts has.
ContainerRuntime container_runtime(const std::string& root, const std::map<std::string, std::string>& env);

struct EnvMismatch {
  std::string name;
  std::optional<std::string> value;  // what the container has; nullopt: it did not arrive
  std::string expected;              // what the mode sets it to
};

// The variables of `actions` (the mode's, as plan_task made them) whose value in `env` is not what
// applying the action would leave it at, in the actions' order.
std::vector<EnvMismatch> env_mismatches(const std::vector<EnvAction>& actions, const std::map<std::string, std::string>& env);

// One line: the variable, both values, why the runtime gave it that value, and the fix. `mode` is
// the --gpu-direct mode, `reason` why this is a container (container_reason).
std::string describe_env_mismatch(const EnvMismatch& mismatch, ContainerRuntime runtime, const std::string& mode,
                                  const std::string& reason);

}  // namespace gpudirect::launcher
