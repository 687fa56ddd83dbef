#include "train/progress_ticker.hpp"

#include <cstdio>

namespace gpudirect::launcher::train_command {

ProgressTicker::ProgressTicker(const train::Trainer& trainer, int steps, int micro_batches, double interval_s)
    : trainer_(trainer), steps_(steps), micro_batches_(micro_batches), interval_(interval_s) {
  if (interval_s > 0) thread_ = std::thread([this] { run(); });
}

ProgressTicker::~ProgressTicker() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressTicker::step_started() {
  std::lock_guard lock(mutex_);
  started_ = std::chrono::steady_clock::now();
  running_ = true;
}

void ProgressTicker::step_finished() {
  std::lock_guard lock(mutex_);
  running_ = false;
}

void ProgressTicker::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::duration<double>(interval_), [this] { return done_; })) {
    if (!running_) continue;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (elapsed < interval_) continue;
    std::printf("      progress: step %ld/%d running for %.1f s, %d/%d micro-batch(es) done\n", trainer_.next_step() + 1, steps_, elapsed,
                trainer_.micro_batches_done(), micro_batches_);
    std::fflush(stdout);
  }
}

}  // namespace gpudirect::launcher::train_command
