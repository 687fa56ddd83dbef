// A stand-in for the slurmstepd side of SPANK: the spank_* and slurm_* functions the plugin calls,
// exported from the test executable (ENABLE_EXPORTS) so that a dlopen()ed spank_gpudirect.so binds
// to them. One process-wide state, as in slurmstepd, that each test sets before calling a hook.
// Used by the plugin's glue tests (tests/plugin_glue) and its leak check (tests/leaks).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

namespace spank_standin {

struct Standin {
  spank_context_t context = S_CTX_REMOTE;
  std::map<std::string, std::string> env;  // the job's environment (user_init) or the task's (task_init)
  std::uint32_t step_id = 0;               // S_JOB_STEPID
  std::uint32_t local_task_id = 0;         // S_TASK_ID
  std::uint32_t global_task_id = 0;        // S_TASK_GLOBAL_ID
  std::uint32_t local_task_count = 1;      // S_JOB_LOCAL_TASK_COUNT
  std::uint32_t node_id = 0;               // S_JOB_NODEID
  spank_option* registered = nullptr;      // what spank_option_register was given
  // The node's network interfaces, as if_nameindex() lists them to the plugin.
  std::vector<std::string> interfaces{"lo",      "enp0s12",  "enp6s0",   "enp7s0",   "enp13s0",
                                      "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"};
  std::vector<std::string> errors;    // slurm_error
  std::vector<std::string> logged;    // slurm_spank_log (what srun shows the user)
  std::vector<std::string> verboses;  // slurm_verbose
};

// The one state the exported functions read and write.
Standin& standin();

// The opaque handle to pass to the hooks (the plugin never dereferences it).
spank_t handle();

}  // namespace spank_standin
