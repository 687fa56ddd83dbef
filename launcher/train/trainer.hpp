// One data-parallel training run on either backend: the step loop, checkpoints that resume
// bit-exactly, the initial broadcast and the end-of-run parameter check. Where buffers live and how
// they travel is the backend's (train_backend.hpp), so CPU and GPU runs share every rule here.
#pragma once

#include "train/checkpoint.hpp"
#include "train/data_source.hpp"
#include "train/model.hpp"
#include "train/step_result.hpp"
#include "train/train_backend.hpp"
#include "train/train_settings.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpudirect::train {

// Every call except next_step/micro_batches_done/bucket_count is collective: every rank makes it, in
// the same order. `model` and `data` must outlive the Trainer; `backend` must work on `model`.
class Trainer {
 public:
  Trainer(Model& model, DataSource& data, const TrainSettings& settings, std::unique_ptr<TrainBackend> backend);

  // Rank 0's parameters to every rank (call once before the first step of a fresh run).
  void broadcast_initial_parameters();
  // Runs step `next_step()`; `stop_requested` is this rank's wish to stop after it.
  StepResult step(bool stop_requested);
  long next_step() const { return step_; }
  // Rank 0 writes / reads the file; the state goes to all. The same file on both backends.
  void save_checkpoint(const std::string& path, const std::string& data_description);
  void load_checkpoint(const std::string& path, const std::string& data_description);
  // The ranks whose parameters differ from rank 0's.
  std::vector<int> check_parameters_agree();
  // Rank 0's value of `value` on every rank.
  int broadcast_from_leader(int value);
  // Micro-batches done in the current step (for a progress line while a long step runs; any thread).
  int micro_batches_done() const { return micro_done_.load(std::memory_order_relaxed); }
  std::size_t bucket_count() const { return backend_->bucket_count(); }
  bool zero1() const { return backend_->zero1(); }  // the AdamW state is sharded

  CheckpointHeader header(const std::string& data_description) const;

 private:
  // Runs `work` on rank 0 only; if it throws CheckpointError every rank throws, rank 0 with the
  // reason and the others with `elsewhere`, so all ranks report the same outcome.
  void on_leader(const std::function<void()>& work, const std::string& elsewhere);

  Model& model_;
  DataSource& data_;
  TrainSettings settings_;
  std::unique_ptr<TrainBackend> backend_;
  long step_ = 0;
  std::atomic<int> micro_done_{0};
  std::vector<std::int32_t> inputs_, targets_;
};

}  // namespace gpudirect::train
