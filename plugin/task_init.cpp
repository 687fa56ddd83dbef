// slurm_spank_task_init (the task's own process, after Slurm's CPU binding and GPU variables,
// before exec): compute the task's binding and apply it. A failure here fails the task, and srun
// exits non-zero, which is why node-side errors are reported here.
#include "plugin_state.hpp"

#include "gpudirect/slurm_task_placement.hpp"
#include "gpudirect/task_apply.hpp"
#include "gpudirect/text.hpp"

#include <array>
#include <optional>

namespace gpudirect::plugin {
namespace {

std::optional<std::string> get_env(spank_t spank, const std::string& name) {
  std::array<char, 8192> buffer{};
  if (spank_getenv(spank, name.c_str(), buffer.data(), static_cast<int>(buffer.size())) != ESPANK_SUCCESS) return std::nullopt;
  return std::string(buffer.data());
}

// The task's process as SPANK gives it: its environment through spank_getenv/spank_setenv.
class SpankTask final : public TaskProcess {
 public:
  explicit SpankTask(spank_t spank) : spank_(spank) {}
  std::optional<std::string> get_env(const std::string& name) override { return plugin::get_env(spank_, name); }
  bool set_env(const std::string& name, const std::string& value) override {
    return spank_setenv(spank_, name.c_str(), value.c_str(), 1) == ESPANK_SUCCESS;
  }

 private:
  spank_t spank_;
};

// The message for a task that could not be given its setup.
std::string failure_message(const TaskApplyResult& applied, const std::string& host) {
  using Failure = TaskApplyResult::Failure;
  switch (applied.failure) {
    case Failure::node_not_ready:
      return "on " + host + ": the TCPXO receive-datapath manager (RxDM) is not ready: " + applied.detail +
             "; start RxDM in the node's prolog (or check its logs), or raise rxdm_timeout= in plugstack.conf";
    case Failure::plan:
      return applied.detail;
    case Failure::set_env:
      return "on " + host + ": cannot set " + applied.detail + " in the task's environment";
    case Failure::bind_cpus:
      return "on " + host + ": cannot bind the task to CPUs " + applied.setup.binding.cpus.to_list() + ": " + applied.detail +
             "; set cpu_bind=off in plugstack.conf if the node restricts affinity";
    case Failure::none:
      break;
  }
  return "";
}

template <typename T>
std::optional<T> get_item(spank_t spank, spank_item_t item) {
  T value{};
  if (spank_get_item(spank, item, &value) != ESPANK_SUCCESS) return std::nullopt;
  return value;
}

}  // namespace

bool is_parallel_step(spank_t spank) {
  std::uint32_t step = 0;
  if (spank_get_item(spank, S_JOB_STEPID, &step) != ESPANK_SUCCESS) return true;
  return step != SLURM_BATCH_SCRIPT && step != SLURM_EXTERN_CONT && step != SLURM_INTERACTIVE_STEP;
}

int on_task_init(spank_t spank) {
  PluginState& s = state();
  if (!is_parallel_step(spank) || asked_mode() == Mode::off) return 0;
  prepare_node();
  const std::string host = host_name();
  if (!s.node) {
    log_error("on " + host + ": " + (s.node_error.empty() ? std::string("node not prepared") : s.node_error));
    return -1;
  }

  TaskSetupInput input;
  input.config = s.config;
  input.request = s.request;
  input.hostname = host;
  input.facts = s.node->facts;
  if (s.node->profile) input.profile = &*s.node->profile;
  input.allowed_cpus = CpuSet::of_this_thread();
  input.node_interfaces = s.node->interfaces;
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "SLURM_JOB_ID", "SLURM_CPU_BIND_TYPE",
                           "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE", "SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_TASK",
                           // for ',torch' (torch_env.hpp)
                           "SLURM_STEP_NODELIST", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_STEP_RESV_PORTS", "SLURM_STEP_ID"})
    if (auto value = get_env(spank, name)) input.env[name] = *value;
  // Slurm's own numbers are more reliable than environment variables a user can change.
  if (auto local = get_item<std::uint32_t>(spank, S_TASK_ID)) input.env["SLURM_LOCALID"] = std::to_string(*local);
  if (auto global = get_item<std::uint32_t>(spank, S_TASK_GLOBAL_ID)) input.env["SLURM_PROCID"] = std::to_string(*global);
  if (auto count = get_item<std::uint32_t>(spank, S_JOB_LOCAL_TASK_COUNT)) input.env["SLURM_LOCAL_TASKS"] = std::to_string(*count);
  // What user_init read before Slurm narrowed the GPUs per task; plan_task exports it for the doctor.
  input.env[kStepGpusVariable] = s.step_gpus_on_node;

  SpankTask task(spank);
  const TaskApplyResult applied = apply_task(s.node->topology, s.node->plan, input, s.node->readiness, task);
  if (applied.failure != TaskApplyResult::Failure::none) {
    log_error(failure_message(applied, host));
    return -1;
  }
  const TaskSetup& setup = applied.setup;
  const bool verbose = s.config.verbose || (s.option_given && s.request.verbose);
  if (verbose)
    slurm_spank_log("%s", setup.summary.c_str());
  else
    slurm_verbose("%s", setup.summary.c_str());
  return 0;
}

}  // namespace gpudirect::plugin
