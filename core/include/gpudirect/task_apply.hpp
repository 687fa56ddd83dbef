// Applying a task's setup to the process that runs it: one sequence for the plugin's task_init and
// `gpudirect-launch exec`, so the two refuse, set and bind alike. Core knows no Slurm: the caller
// passes its process through TaskProcess (the plugin: SPANK's calls; exec: its own environment).
#pragma once

#include "gpudirect/cpuset.hpp"
#include "gpudirect/mode_resolution.hpp"
#include "gpudirect/plugin_config.hpp"
#include "gpudirect/readiness.hpp"
#include "gpudirect/task_setup.hpp"

#include <functional>
#include <optional>
#include <string>

namespace gpudirect {

// The process a task's setup is applied to.
class TaskProcess {
 public:
  virtual ~TaskProcess() = default;
  virtual std::optional<std::string> get_env(const std::string& name) = 0;
  virtual bool set_env(const std::string& name, const std::string& value) = 0;
  // 0, or the errno of binding the calling thread to `cpus` (sched_setaffinity).
  virtual int bind_cpus(const CpuSet& cpus);
};

// Whether the services a node's mode needs are up; decided once per node, before any task is planned.
struct NodeReadiness {
  std::string rxdm_not_ready;  // what was last seen of RxDM when it was waited for and is not up; "" otherwise
  bool ready() const { return rxdm_not_ready.empty(); }
};

using ReadinessWait = std::function<ReadinessResult(const std::string& path, int timeout_s)>;

// The one RxDM rule: wait (boundedly, rxdm_timeout=) for TCPXO's receive-datapath manager exactly
// when resolve_mode says so (ModeDecision::wait_for_rxdm: the resolved mode is TCPXO and rxdm_ready=
// is set), before any task is planned, whatever a task's plan would say. The plugin calls it once
// per node before the tasks fork, exec before its one task.
NodeReadiness wait_for_node_readiness(const ModeDecision& decision, const PluginConfig& config,
                                      const ReadinessWait& wait = wait_until_ready);

struct TaskApplyResult {
  enum class Failure { none, node_not_ready, plan, set_env, bind_cpus };
  Failure failure = Failure::none;
  // node_not_ready: RxDM's last state; plan: plan_task's message (naming the node); set_env: the
  // variable's name; bind_cpus: the system's reason. The caller words the message for its users.
  std::string detail;
  TaskSetup setup;  // as planned; applied in full when failure is none
};

// In order: refuse a node that is not ready, plan_task, set the environment (EnvAction rules against
// the process's current values), bind the CPUs when the setup says so. Stops at the first failure.
TaskApplyResult apply_task(const Topology& topology, const NodePlan& plan, const TaskSetupInput& input, const NodeReadiness& readiness,
                           TaskProcess& process);

}  // namespace gpudirect
