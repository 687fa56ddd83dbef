// One attempt of the supervised training: `srun ... gpudirect-launch train ... --resume` on the
// chosen nodes of the allocation, its output in a log file the supervisor relays, and the three
// ways to end it: ask (SIGUSR1: every rank finishes its step, rank 0 writes the checkpoint, exit
// 10), abort (srun's double SIGINT cancels the step) and kill (srun gone, the step cancelled by id).
#pragma once

#include "supervise/supervise_options.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::supervise {

struct Attempt {
  int number = 1;
  std::vector<std::string> nodes;
  std::string json_path, log_path;
  std::string step_name() const { return "gpudirect-train-" + std::to_string(number); }
};

// srun --nodes=N --nodelist=... --ntasks-per-node=T --overlap --kill-on-bad-exit=1 --job-name=NAME
// SRUN_ARGS LAUNCHER --timeout S train TRAIN_ARGS [--resume] -J JSON.
std::vector<std::string> training_step_command(const SuperviseOptions& options, const Attempt& attempt);

class TrainingStep {
 public:
  // Starts srun with its output in attempt.log_path (created anew); throws std::runtime_error.
  TrainingStep(const std::vector<std::string>& argv, const Attempt& attempt);
  ~TrainingStep();
  TrainingStep(const TrainingStep&) = delete;
  TrainingStep& operator=(const TrainingStep&) = delete;

  // The exit code once srun has ended (-1 for a signal); nullopt while it runs.
  std::optional<int> poll();
  void ask_to_stop();
  void abort();
  // SIGKILL to srun, then scancel of whatever is left of the step in Slurm.
  void kill();
  bool running() const { return !ended_; }

 private:
  Attempt attempt_;
  pid_t pid_ = -1;
  bool ended_ = false;
  int exit_code_ = -1;
};

// New whole lines of a growing file, from where the last call stopped (a partial last line waits).
class LineTail {
 public:
  explicit LineTail(std::string path) : path_(std::move(path)) {}
  std::vector<std::string> read_new();

 private:
  std::string path_;
  long long offset_ = 0;
  std::string partial_;
};

}  // namespace gpudirect::launcher::supervise
