// The Slurm job that measures one pair (or group): its srun command line, and how its output
// becomes a SweepRun (bench's JSON when the file is visible here, else bench's "# Avg bus
// bandwidth" line that srun forwards).
#pragma once

#include "health/sweep_run.hpp"
#include "shell_words.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::health {

struct JobOptions {
  std::string launcher;  // gpudirect-launch as the nodes see it
  int tasks_per_node = 8;
  int gpus_per_task = 1;               // 0: no --gpus-per-task
  std::string gpu_direct;              // "" : no --gpu-direct
  std::vector<std::string> srun_args;  // passed to srun as given
  std::string min_bytes = "2G", max_bytes = "8G";
  std::string step_factor = "2";
  int iters = 20, warmup = 5;
  std::vector<std::string> bench_args;  // passed to bench as given
  double bench_timeout_s = 60;          // gpudirect-launch --timeout: a silent rank ends the job
  double pair_timeout_s = 300;          // also Slurm's --time for the job, rounded up to minutes
  std::string job_name = "gpudirect-health";
};

std::vector<std::string> srun_command(const std::vector<std::string>& nodes, const JobOptions& options, const std::string& json_path);

// A shell-ready line of an argument vector (quoted where needed), for logs and messages.
using launcher::shell_line;

struct BenchResult {
  std::optional<double> busbw;  // average bus bandwidth, GB/s
  std::size_t wrong = 0;        // out-of-bounds values
};

// From bench's --json file contents; empty when it does not parse or has no avg_busbw.
std::optional<BenchResult> bench_result_from_json(const std::string& json_text);
// From bench's table as srun forwarded it (with or without srun's "0: " label prefixes).
std::optional<BenchResult> bench_result_from_output(const std::string& output);

// True when srun was still waiting for the allocation (queued, never got the nodes).
bool waited_for_resources(const std::string& srun_output);

// The SweepRun of a finished job: exit status (-1 when killed by the timeout), its log (srun's
// stdout and stderr), and bench's JSON if readable.
SweepRun judge_job(std::vector<std::string> nodes, Phase phase, int exit_code, bool timed_out, double seconds, const std::string& log,
                   const std::optional<std::string>& json_text);

}  // namespace gpudirect::launcher::health
