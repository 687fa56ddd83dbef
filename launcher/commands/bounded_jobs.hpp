// Runs commands side by side, each in its own process group with its output in a log file, and
// ends any that outlive the timeout (SIGTERM to the group, so srun cancels its job; SIGKILL after
// a grace period). A command that runs them (health's pairs, supervise's node checks) is bounded by
// construction: no job can hold it longer than that.
#pragma once

#include "child_process.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gpudirect::launcher {

struct BoundedJob {
  std::vector<std::string> argv;
  std::string log_path;  // stdout and stderr
};

struct JobEnd {
  int exit_code = -1;  // -1 when it was killed or ended by a signal
  bool timed_out = false;
  double seconds = 0;
};

// Starts every job at once and returns when all have ended. on_start/on_end (index) report
// progress. SIGINT/SIGTERM to this process end the jobs the same way and throw
// std::runtime_error after they are gone. Throws std::runtime_error if a job cannot start.
std::vector<JobEnd> run_bounded(const std::vector<BoundedJob>& jobs, double timeout_s, const std::function<void(std::size_t)>& on_start,
                                const std::function<void(std::size_t, const JobEnd&)>& on_end);

// sinfo and scontrol run through the commands' shared helper (child_process.hpp).
using launcher::run_capture;

}  // namespace gpudirect::launcher
