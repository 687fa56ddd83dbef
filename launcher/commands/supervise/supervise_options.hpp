// What `gpudirect-launch supervise` was asked: the allocation's spares, the fault rules, how to
// check a node and sweep pairs, and the training command it supervises (train's own options,
// after --). Checked before anything runs, so a typo costs no step.
#pragma once

#include "supervise/fault_watch.hpp"

#include <string>
#include <vector>

namespace gpudirect::launcher::supervise {

struct SuperviseOptions {
  int spare_nodes = 1;
  int ntasks_per_node = 1;
  std::vector<std::string> srun_args;  // every training step's srun, as given (--gpus-per-task=1 --gpu-direct=tcpxo)
  double rank_timeout_s = 60;          // gpudirect-launch --timeout for the ranks: a silent peer ends them
  WatchSettings watch;
  std::string node_check;          // check-node --machine-type; "" : a node is checked by running a step on it
  std::string node_check_program;  // run as PROGRAM check-node --machine-type T --json (default: the launcher)
  std::vector<std::string> node_check_args;
  double check_timeout_s = 60;          // a node that gives no answer within this is taken out
  std::vector<std::string> sweep_args;  // more `health` options for the pair test (sizes, --gpu-direct, thresholds)
  double stop_grace_s = 30;             // after asking a step to stop: then it is killed
  int max_restarts = 10;                // after this many relaunches the supervisor gives up
  std::string launcher;                 // gpudirect-launch as the nodes see it (default: this binary)
  std::string work_dir;                 // logs, each attempt's JSON lines, node checks, sweeps
  std::string json, metrics_file;
  std::vector<std::string> train_args;  // train's options, after --
};

// What the supervisor must know of train's own options (read, never changed): the checkpoint it
// resumes from, how often it is written, the planned steps.
struct TrainPlan {
  std::string checkpoint;
  int checkpoint_every = 0;
  long steps = 10;
};

// Throws UsageError naming the option: the counts and times, and train options that the supervisor
// sets itself (-J, --resume is added when missing) or needs (--checkpoint).
TrainPlan check_options(const SuperviseOptions& o);

}  // namespace gpudirect::launcher::supervise
