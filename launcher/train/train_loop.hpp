// What the train command drives, whatever runs the model: the fp32 CPU Trainer (trainer.hpp) or
// the CUDA one (cuda/cuda_training.hpp). Every call except next_step/micro_batches_done/bucket_count
// is collective: every rank makes it, in the same order.
#pragma once

#include "train/gradient_buckets.hpp"
#include "train/optimizer.hpp"

#include <cstddef>
#include <string>
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

class TrainLoop {
 public:
  virtual ~TrainLoop() = default;
  // Rank 0's parameters to every rank (call once before the first step of a fresh run).
  virtual void broadcast_initial_parameters() = 0;
  // Runs step `next_step()`; `stop_requested` is this rank's wish to stop after it.
  virtual StepResult step(bool stop_requested) = 0;
  virtual long next_step() const = 0;
  // Rank 0 writes / reads the file; the state goes to all. Same file format on CPU and CUDA.
  virtual void save_checkpoint(const std::string& path, const std::string& data_description) = 0;
  virtual void load_checkpoint(const std::string& path, const std::string& data_description) = 0;
  // The ranks whose parameters differ from rank 0's.
  virtual std::vector<int> check_parameters_agree() = 0;
  // Rank 0's value of `value` on every rank.
  virtual int broadcast_from_leader(int value) = 0;
  // Micro-batches done in the current step (for a progress line while a long step runs).
  virtual int micro_batches_done() const = 0;
  virtual std::size_t bucket_count() const = 0;
};

}  // namespace gpudirect::train
