#include "gpudirect/slurm_task_placement.hpp"

#include "gpudirect/slurm_tasks.hpp"
#include "gpudirect/text.hpp"

#include <stdexcept>

namespace gpudirect {
namespace {

using Env = std::map<std::string, std::string>;

int int_or(const Env& env, const std::string& name, int fallback) {
  const std::string* text = slurm_variable(env, name);
  if (!text) return fallback;
  if (const auto value = try_parse_integer<int>(*text, 0, 1 << 20)) return *value;
  throw std::invalid_argument(name + "=" + quote_bounded(*text) + " is not an integer in 0.." + std::to_string(1 << 20));
}

}  // namespace

SlurmTaskPlacement slurm_task_placement(const Env& env) {
  SlurmTaskPlacement p;
  p.node = int_or(env, "SLURM_NODEID", 0);
  p.local_rank = int_or(env, "SLURM_LOCALID", 0);
  if (const int counted = int_or(env, "SLURM_LOCAL_TASKS", 0); counted > 0) {
    p.local_size = counted;
  } else if (const std::string* per_node = slurm_variable(env, "SLURM_STEP_TASKS_PER_NODE")
                                               ? slurm_variable(env, "SLURM_STEP_TASKS_PER_NODE")
                                               : slurm_variable(env, "SLURM_TASKS_PER_NODE")) {
    p.local_size = tasks_on_node(*per_node, p.node);
  } else {
    p.local_size = p.local_rank + 1;  // no count given: at least the tasks up to this one
  }
  if (p.local_rank >= p.local_size)
    throw std::invalid_argument("SLURM_LOCALID=" + std::to_string(p.local_rank) + " is not below the step's " +
                                std::to_string(p.local_size) + " task(s) on this node (SLURM_STEP_TASKS_PER_NODE)");
  if (const std::string* gpus = slurm_variable(env, kStepGpusVariable)) p.step_gpus_on_node = *gpus;
  return p;
}

}  // namespace gpudirect
