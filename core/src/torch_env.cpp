#include "gpudirect/torch_env.hpp"

#include "gpudirect/slurm_step.hpp"
#include "gpudirect/text.hpp"

namespace gpudirect {

std::vector<EnvAction> torch_distributed_env(const std::map<std::string, std::string>& env, const std::vector<std::string>& interfaces) {
  std::vector<EnvAction> actions;
  const auto add = [&](const char* name, const std::string& value) { actions.push_back({name, value, EnvActionKind::set_if_unset}); };
  if (const auto task = slurm_step_task(env)) {
    add("RANK", std::to_string(task->rank));
    add("WORLD_SIZE", std::to_string(task->size));
    add("LOCAL_RANK", std::to_string(task->local_rank));
    add("LOCAL_WORLD_SIZE", std::to_string(task->local_size));
    add("MASTER_ADDR", task->rendezvous_host);
    add("MASTER_PORT", std::to_string(task->rendezvous_port));
  }
  if (!interfaces.empty()) {
    // A value an enclosing task's binding set (torchrun's agent under srun ',torch': all of its
    // NICs) is ours to narrow to this process's; a value of the user's own stays.
    const auto given = env.find("GLOO_SOCKET_IFNAME"), bound = env.find("GPUDIRECT_NICS");
    const bool inherited = given != env.end() && bound != env.end() && given->second == bound->second;
    actions.push_back({"GLOO_SOCKET_IFNAME", join(interfaces, ","), inherited ? EnvActionKind::set : EnvActionKind::set_if_unset});
  }
  return actions;
}

}  // namespace gpudirect
