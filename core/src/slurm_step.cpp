#include "gpudirect/slurm_step.hpp"

#include "gpudirect/hostlist.hpp"
#include "gpudirect/slurm_task_placement.hpp"
#include "gpudirect/slurm_tasks.hpp"
#include "gpudirect/text.hpp"

#include <cstdint>
#include <stdexcept>

namespace gpudirect {
namespace {

using Env = std::map<std::string, std::string>;

int as_int(const std::string& name, const std::string& text, int min, int max) {
  if (const auto value = try_parse_integer<int>(text, min, max)) return *value;
  throw std::invalid_argument(name + "=" + text + " is not an integer in " + std::to_string(min) + ".." + std::to_string(max));
}

}  // namespace

int derived_rendezvous_port(const std::string& job_id, const std::string& step_id) {
  std::uint32_t hash = 2166136261u;  // FNV-1a
  for (char c : job_id + "." + step_id) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return 20000 + static_cast<int>(hash % 20000u);
}

std::optional<SlurmStepTask> slurm_step_task(const Env& env) {
  const std::string* procid = slurm_variable(env, "SLURM_PROCID");
  const std::string* nodelist = slurm_variable(env, "SLURM_STEP_NODELIST");
  if (!procid || !nodelist) return std::nullopt;
  SlurmStepTask t;
  const char* size_name = slurm_variable(env, "SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
  if (!slurm_variable(env, size_name))
    throw std::invalid_argument("SLURM_PROCID is set but neither SLURM_STEP_NUM_TASKS nor SLURM_NTASKS is");
  t.size = as_int(size_name, *slurm_variable(env, size_name), 1, 1 << 20);
  t.rank = as_int("SLURM_PROCID", *procid, 0, t.size - 1);
  const SlurmTaskPlacement placement = slurm_task_placement(env);
  t.local_rank = placement.local_rank;
  t.local_size = placement.local_size;
  t.node = placement.node;
  const std::vector<std::string> hosts = expand_hostlist(*nodelist);
  if (hosts.empty()) throw std::invalid_argument("SLURM_STEP_NODELIST=" + *nodelist + " names no host");
  t.rendezvous_host = hosts.front();
  if (const std::string* ports = slurm_variable(env, "SLURM_STEP_RESV_PORTS")) {
    t.rendezvous_port = as_int("SLURM_STEP_RESV_PORTS", ports->substr(0, ports->find_first_of("-,")), 1, 65535);
  } else {
    const std::string* job = slurm_variable(env, "SLURM_JOB_ID");
    const std::string* step = slurm_variable(env, "SLURM_STEP_ID");
    t.rendezvous_port = derived_rendezvous_port(job ? *job : "0", step ? *step : "0");
  }
  return t;
}

}  // namespace gpudirect
