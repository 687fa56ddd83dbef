// One data-parallel training run: the step loop over a Model, a Communicator and a DataSource, with
// gradient buckets overlapped with backward, optional ZeRO-1, clipping, AdamW and the schedule, and
// checkpoints that resume bit-exactly. No printing: the train command reports what step() returns.
#pragma once

#include "comm/communicator.hpp"
#include "train/checkpoint.hpp"
#include "train/data_source.hpp"
#include "train/gradient_sync.hpp"
#include "train/model.hpp"
#include "train/optimizer.hpp"

#include <atomic>
#include <memory>
#include <vector>

namespace gpudirect::train {

struct TrainSettings {
  LrSchedule schedule;
  AdamWSettings adamw;
  float grad_clip = 1.0f;        // global-norm clipping; <= 0 turns it off
  bool zero1 = false;
  std::size_t first_bucket_bytes = kFirstBucketBytes;
  std::size_t bucket_bytes = kBucketBytes;
};

struct StepResult {
  long step = 0;                     // 0-based index of the step just done
  double loss = 0;                   // mean over ranks (and micro-batches)
  float lr = 0;
  double grad_norm = 0;              // before clipping
  double seconds = 0;                // this rank's step time
  double exposed_comm_seconds = 0;   // this rank's time blocked on communication
  std::vector<double> rank_seconds;  // every rank's step time
  std::vector<double> rank_exposed_seconds;
  bool stop = false;                 // some rank asked to stop (a signal): every rank agrees
};

class Trainer {
 public:
  Trainer(Model& model, comm::Communicator& comm, DataSource& data, const TrainSettings& settings);

  // Rank 0's parameters to every rank (call once before the first step of a fresh run).
  void broadcast_initial_parameters();
  // Runs step `next_step()`; `stop_requested` is this rank's wish to stop after it.
  StepResult step(bool stop_requested);
  long next_step() const { return step_; }

  // Collective: every rank must call these. Rank 0 writes / reads the file; the state goes to all.
  void save_checkpoint(const std::string& path, const std::string& data_description);
  void load_checkpoint(const std::string& path, const std::string& data_description);

  // Collective: the ranks whose parameters differ from rank 0's.
  std::vector<int> check_parameters_agree();

  // Micro-batches done in the current step (for a progress line while a long step runs).
  int micro_batches_done() const { return micro_done_.load(std::memory_order_relaxed); }

  const GradientSync& sync() const { return sync_; }
  CheckpointHeader header(const std::string& data_description) const;

 private:
  Model& model_;
  comm::Communicator& comm_;
  DataSource& data_;
  TrainSettings settings_;
  GradientSync sync_;
  AdamW adamw_;
  long step_ = 0;
  std::atomic<int> micro_done_{0};
  std::vector<std::int32_t> inputs_, targets_;
};

}  // namespace gpudirect::train
