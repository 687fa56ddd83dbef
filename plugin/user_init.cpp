// slurm_spank_init_post_opt (slurmstepd, as root, once per step and node, after the options) and
// slurm_spank_user_init (the same process, as the job's user, before tasks fork): load the
// topology (through the node's topology cache, which only root may write), plan the node, resolve
// the mode and, when it resolves to TCPXO, wait for the TCPXO receive-datapath manager, once for
// all the node's tasks. Whichever runs first does it; steps without --gpu-direct (and no default)
// do nothing here.
// A failure here would only print "launch failed" while srun exits 0, so it is recorded and
// reported by task_init instead. task_init prepares the node itself if neither did.
#include "plugin_state.hpp"

#include "gpudirect/gpu_uuid.hpp"
#include "gpudirect/network_interfaces.hpp"
#include "gpudirect/topology_cache.hpp"
#include "gpudirect/topology_sources.hpp"

#include <unistd.h>

namespace gpudirect::plugin {

void prepare_node() {
  PluginState& s = state();
  if (s.node || !s.node_error.empty()) return;
  try {
    NodeState node;
    TopologyCacheConfig cache;
    cache.dir = s.config.topology_cache;
    CachedTopology loaded = load_topology_cached(s.config.topology, cache);
    if (!loaded.note.empty()) slurm_verbose("gpudirect: %s", loaded.note.c_str());
    node.topology = std::move(loaded.topology);
    node.plan = plan_node(node.topology);
    node.facts = probe_node_facts(s.config);
    node.interfaces = network_interface_names();  // the node's namespace, as its tasks see it
    node.mode = resolve_mode(s.request, s.config, node.topology, node.facts);
    // Every task of the step renders the same profile: read and parse it once here, before the
    // tasks fork, not once per task (a task that cannot have it reports why in task_init).
    if (node.mode.mode != Mode::off) {
      try {
        node.profile = load_profile(profile_name_for(s.config, node.mode.mode), profile_search_path(s.config));
      } catch (const ProfileError&) {
      }
    }
    s.node = std::move(node);
    nvml_resolver();  // constructed here, once, not in every forked task (NVML itself loads only for UUIDs)
  } catch (const std::exception& e) {
    s.node_error = std::string("cannot read the node's topology: ") + e.what();
    return;
  }
  s.node->readiness = wait_for_node_readiness(s.node->mode, s.config);
}

int on_user_init(spank_t spank) {
  if (spank_context() != S_CTX_REMOTE || !is_parallel_step(spank) || asked_mode() == Mode::off) return 0;
  // The step's GPUs on this node, before Slurm narrows them per task (task_init uses them; read in
  // whichever of init_post_opt and user_init sees them): under ConstrainDevices Slurm 22.05 gives
  // each task a wrong narrowed SLURM_STEP_GPUS, or none (gpu_selection.hpp).
  char gpus[4096] = "";
  if (spank_getenv(spank, "SLURM_STEP_GPUS", gpus, sizeof gpus) == ESPANK_SUCCESS ||
      spank_getenv(spank, "SLURM_JOB_GPUS", gpus, sizeof gpus) == ESPANK_SUCCESS)
    state().step_gpus_on_node = gpus;
  prepare_node();
  return 0;
}

}  // namespace gpudirect::plugin
