// Everything one task gets, computed in one place: the plugin applies it inside slurmstepd and
// `gpudirect-launch doctor` prints and checks it, so the two can never disagree.
#pragma once

#include "gpudirect/binding.hpp"
#include "gpudirect/gpu_uuid.hpp"
#include "gpudirect/mode.hpp"
#include "gpudirect/mode_resolution.hpp"
#include "gpudirect/network_profile.hpp"
#include "gpudirect/plugin_config.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpudirect {

class TaskSetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TaskSetupInput {
  PluginConfig config;
  ModeRequest request;                     // the user's --gpu-direct (mode empty: plugstack default)
  std::map<std::string, std::string> env;  // the task's environment (only what is read matters)
  CpuSet allowed_cpus;                     // the task's affinity as Slurm left it
  std::string hostname;
  NodeFacts facts;
  GpuUuidResolver* uuid_resolver = nullptr;  // for GPU-/MIG- UUIDs; null: NVML (nvml_resolver())
  // The mode's network profile when the caller loaded it already (the plugin does so once per step,
  // before the tasks fork); null, or another profile than the mode needs: plan_task loads it.
  const NetworkProfile* profile = nullptr;
  // Slurm's variables are read by slurm_task_placement (slurm_task_placement.hpp); the step's GPUs on
  // the node before Slurm narrowed them per task come in env's GPUDIRECT_STEP_GPUS (the plugin puts
  // what it read in user_init there, and plan_task exports it for the doctor and exec).
  // The network interfaces the node's tasks see (network_interfaces.hpp), when the caller probed
  // them: plan_task then refuses a profile that would name an interface the node does not have.
  // The plugin probes them; offline tools (doctor on another machine) leave them unset.
  std::optional<std::vector<std::string>> node_interfaces;
};

struct TaskSetup {
  Mode mode = Mode::off;
  std::string mode_reason;  // why auto chose what it chose
  TaskBinding binding;
  std::vector<EnvAction> env;  // to apply in order
  bool set_affinity = false;
  // own_gpus_only_warning (gpu_visibility.hpp): NVLink lost under ConstrainDevices; "" when not.
  std::string gpu_visibility_warning;
  std::string summary;  // the one verbose line, warnings included
};

// The profile a mode uses: tcpxo -> config.tcpxo_profile, the others their own name.
std::string profile_name_for(const PluginConfig& config, Mode mode);

// The mode comes from resolve_mode (mode_resolution.hpp). Throws TaskSetupError with one message
// naming node, cause and fix.
TaskSetup plan_task(const Topology& topology, const NodePlan& plan, const TaskSetupInput& input);

// The variables a task's environment holds after `setup` is applied to `env`.
std::map<std::string, std::string> apply_env(const std::vector<EnvAction>& actions, std::map<std::string, std::string> env);

}  // namespace gpudirect
