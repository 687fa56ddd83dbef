// The exit codes and the usage error every command shares, and the one way a command reports the
// exception that ended it, so "6 usage" means the same in every command.
#pragma once

#include <exception>
#include <functional>
#include <stdexcept>
#include <string_view>

namespace gpudirect::launcher {

// Every command: 0 ok, 1 failure, 6 usage (main.cpp's own usage errors too).
inline constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 6;
// bench: nccl-tests' codes (documented in bench --help).
inline constexpr int kExitCuda = 2, kExitComm = 3, kExitTimeout = 4, kExitWrong = 7;
// health: bad or suspect nodes found (bench's 7: measured under the threshold).
inline constexpr int kExitBadNodes = 7;
// train: ranks' parameters differ at the end; stopped by SIGTERM/SIGUSR1 with the checkpoint written.
inline constexpr int kExitDiverged = 8, kExitPreempted = 10;
// supervise: a node had to be replaced and no spare was left (the sbatch script may requeue).
inline constexpr int kExitNoSpare = 11;
// exec: CMD could not be run, or was not found, as a shell says.
inline constexpr int kExitCannotRun = 126, kExitNotFound = 127;

// A request the command refuses before (or instead of) doing the work: exit kExitUsage.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// kExitUsage for a UsageError, else kExitFailure.
int usage_or_failure(const std::exception& error);

// Runs a command's body and returns its exit code. An exception it lets out is printed on stderr
// as "<prefix>: <what>" and ends the command with exit_code_for(the exception).
int run_command(std::string_view prefix, const std::function<int()>& body, int (*exit_code_for)(const std::exception&) = usage_or_failure);

}  // namespace gpudirect::launcher
