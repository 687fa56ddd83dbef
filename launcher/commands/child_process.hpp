// Starting a helper program (srun, sinfo, scontrol) in its own process group, and running a short
// one to the end with its output: what health's pair jobs and every command's scontrol calls share.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace gpudirect::launcher {

// fork + exec (PATH search) in a new process group; the child's stdout and stderr go to
// `output_fd`, its stdin is /dev/null. A program that cannot be run exits 127 saying why.
pid_t spawn(const std::vector<std::string>& argv, int output_fd);

// A wait status as an exit code: -1 when the process ended by a signal.
int exit_code_of(int status);

// Runs one short command (sinfo, scontrol) and returns its exit status and output (stdout and
// stderr together); killed after `timeout_s`. Throws std::runtime_error if it cannot start.
std::pair<int, std::string> run_capture(const std::vector<std::string>& argv, double timeout_s = 60);

}  // namespace gpudirect::launcher
