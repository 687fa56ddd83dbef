// Who a Slurm task is in its step, read from the variables srun gives every task. The one reading
// of them: the launcher's rendezvous and the torch.distributed variables (torch_env.hpp) use it.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace gpudirect {

struct SlurmStepTask {
  int rank = 0;        // SLURM_PROCID
  int size = 1;        // SLURM_STEP_NUM_TASKS, else SLURM_NTASKS
  int local_rank = 0;  // these three as slurm_task_placement reads them (slurm_task_placement.hpp)
  int local_size = 1;
  int node = 0;
  // The same on every task of the step: the first host of SLURM_STEP_NODELIST, the first port of
  // SLURM_STEP_RESV_PORTS (MpiParams=ports=) or else one derived from the job and step ids.
  std::string rendezvous_host;
  int rendezvous_port = 0;
};

// nullopt when `env` is not a Slurm step task's (no SLURM_PROCID or SLURM_STEP_NODELIST).
// Throws std::invalid_argument naming the variable when a value is malformed.
std::optional<SlurmStepTask> slurm_step_task(const std::map<std::string, std::string>& env);

// 20000..39999 from the job and step ids: the same for every task of a step, different for the
// next step of the job.
int derived_rendezvous_port(const std::string& job_id, const std::string& step_id);

}  // namespace gpudirect
