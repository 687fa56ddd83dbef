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
#include "train/train_loop.hpp"

#include <atomic>
#include <memory>
#include <vector>

namespace gpudirect::train {

class Trainer final : public TrainLoop {
 public:
  Trainer(Model& model, comm::Communicator& comm, DataSource& data, const TrainSettings& settings);

  void broadcast_initial_parameters() override;
  StepResult step(bool stop_requested) override;
  long next_step() const override { return step_; }
  void save_checkpoint(const std::string& path, const std::string& data_description) override;
  void load_checkpoint(const std::string& path, const std::string& data_description) override;
  std::vector<int> check_parameters_agree() override;
  int broadcast_from_leader(int value) override;
  int micro_batches_done() const override { return micro_done_.load(std::memory_order_relaxed); }
  std::size_t bucket_count() const override { return sync_.buckets().size(); }

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
