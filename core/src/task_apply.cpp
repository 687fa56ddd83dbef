#include "gpudirect/task_apply.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace gpudirect {

int TaskProcess::bind_cpus(const CpuSet& cpus) {
  CpuSet::Native native;
  cpus.to_cpu_set(native);
  return sched_setaffinity(0, native.size, native.set) == 0 ? 0 : errno;
}

NodeReadiness wait_for_node_readiness(const ModeDecision& decision, const PluginConfig& config, const ReadinessWait& wait) {
  NodeReadiness readiness;
  if (!decision.wait_for_rxdm) return readiness;
  const ReadinessResult rxdm = wait(config.rxdm_ready, config.rxdm_timeout_s);
  if (!rxdm.ready) readiness.rxdm_not_ready = rxdm.detail;
  return readiness;
}

TaskApplyResult apply_task(const Topology& topology, const NodePlan& plan, const TaskSetupInput& input, const NodeReadiness& readiness,
                           TaskProcess& process) {
  TaskApplyResult result;
  const auto failed = [&](TaskApplyResult::Failure failure, std::string detail) {
    result.failure = failure;
    result.detail = std::move(detail);
    return result;
  };
  if (!readiness.ready()) return failed(TaskApplyResult::Failure::node_not_ready, readiness.rxdm_not_ready);
  try {
    result.setup = plan_task(topology, plan, input);
  } catch (const TaskSetupError& e) {
    return failed(TaskApplyResult::Failure::plan, e.what());
  }
  for (const EnvAction& action : result.setup.env)
    if (auto next = apply_env_action(action, process.get_env(action.name)))
      if (!process.set_env(action.name, *next)) return failed(TaskApplyResult::Failure::set_env, action.name);
  if (result.setup.set_affinity)
    if (const int error = process.bind_cpus(result.setup.binding.cpus); error != 0)
      return failed(TaskApplyResult::Failure::bind_cpus, std::strerror(error));
  return result;
}

}  // namespace gpudirect
