// Rank 0's "still working" line while a step runs longer than an interval (a 5B model on CPU, a slow
// fabric): the step, how long it has run and how many micro-batches are done, so a long step does
// not look like a hang.
#pragma once

#include "train/trainer.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpudirect::launcher::train_command {

class ProgressTicker {
 public:
  // interval_s <= 0: no thread, no lines.
  ProgressTicker(const train::Trainer& trainer, int steps, int micro_batches, double interval_s);
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;
  void step_started();
  void step_finished();

 private:
  void run();

  const train::Trainer& trainer_;
  int steps_, micro_batches_;
  double interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false, running_ = false;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

}  // namespace gpudirect::launcher::train_command
