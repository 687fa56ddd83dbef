// What the plugin remembers between hooks of one process (srun, sbatch or one step's slurmstepd).
#pragma once

#include "gpudirect/binding.hpp"
#include "gpudirect/mode.hpp"
#include "gpudirect/mode_resolution.hpp"
#include "gpudirect/plugin_config.hpp"
#include "gpudirect/task_apply.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology.hpp"

#include <optional>
#include <string>
#include <vector>

#include "spank.hpp"

namespace gpudirect::plugin {

struct NodeState {
  Topology topology;
  NodePlan plan;
  NodeFacts facts;
  ModeDecision mode;                                   // resolve_mode's answer for this step on this node
  std::optional<NetworkProfile> profile;               // the step's mode's profile, read once before tasks fork
  std::optional<std::vector<std::string>> interfaces;  // the node's network interfaces (if_nameindex)
  NodeReadiness readiness;                             // RxDM, waited for once before the tasks fork (task_apply.hpp)
};

struct PluginState {
  PluginConfig config;
  bool option_given = false;
  ModeRequest request;            // the user's --gpu-direct; empty mode when not given
  std::optional<NodeState> node;  // loaded once per step in init_post_opt / user_init (remote)
  std::string node_error;         // why node could not be loaded; reported from task_init
  std::string step_gpus_on_node;  // SLURM_STEP_GPUS (else SLURM_JOB_GPUS) of the step, read in user_init
};

PluginState& state();

// Every message starts with the plugin's name.
void log_error(const std::string& message);

// Hook bodies, one file each.
int on_init(spank_t spank, int argc, char** argv);
int on_option(int val, const char* optarg, int remote);
int on_user_init(spank_t spank);  // init_post_opt and user_init: prepare_node() in slurmstepd
int on_task_init(spank_t spank);
int on_srun_post_opt();  // init_post_opt in srun: the step's rendezvous secret

// The batch script's shell, salloc's interactive step and the extern step are not tasks of a parallel step: binding them
// would leak GPUDIRECT_* and NCCL_* into every srun environment of the job.
bool is_parallel_step(spank_t spank);

// Loads topology and plan, resolves the mode, and waits for RxDM by the one rule of task_apply.hpp;
// records a load error in node_error. Idempotent.
void prepare_node();

// The mode asked for (the option, else the plugstack default; may be auto): off skips everything.
Mode asked_mode();

}  // namespace gpudirect::plugin
