// What a training run tells its user, from rank 0: the start lines, one line per step with the
// straggler, JSON lines (-J), the Prometheus metrics file (--metrics-file) and the end of the run.
// Scripts and tests parse all of it, so the text and the fields are fixed. Every rank keeps the
// step times, because the end-of-run decisions (the last checkpoint) must agree on all ranks.
#pragma once

#include "train/train_options.hpp"

#include "bootstrap/launch_context.hpp"
#include "reporting/train_metrics.hpp"
#include "train/gpt_config.hpp"
#include "train/step_result.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace gpudirect::launcher::train_command {

// The facts of the second start line and the start JSON line.
struct RunStart {
  std::string model_description;  // "fp32 CPU model, 4 thread(s) per rank"
  std::string backend_reason;     // --backend auto: why it chose the model it did
  std::string memory_plan;        // the CUDA model's memory plan line (empty for the CPU model)
  std::string collectives;        // the communicator's backend name
  std::string data;               // the data source's description
  bool zero1 = false;             // --zero1 as asked (the JSON's field)
  bool sharded = false;           // the AdamW state is sharded (ZeRO-1 in effect)
  std::size_t buckets = 0;
  std::string peak_source;
  long resumed_at = -1;  // the step a --resume continued from; -1 for a fresh run
};

class StepReporter {
 public:
  // Opens the -J file on rank 0 (appended to on a resume); throws std::runtime_error when it cannot.
  // `gpu_memory_gib` is empty without the CUDA model.
  StepReporter(const TrainOptions& options, const train::GptConfig& config, const bootstrap::LaunchContext& context,
               std::vector<std::string> hosts, double peak_flops, bool resumed, std::function<double()> gpu_memory_gib);
  ~StepReporter();
  StepReporter(const StepReporter&) = delete;
  StepReporter& operator=(const StepReporter&) = delete;

  void start(const RunStart& run);
  void step(const train::StepResult& result);
  void checkpoint_written(long step, const char* why, double seconds);
  void stopped_by_signal(long step);
  // After the loop: the metrics file's last write, and the line for a run that had nothing to do.
  void run_ended(long next_step);
  void parameters_differ(const std::vector<int>& ranks);
  // The summary line and JSON line (with the exit code), then the -J file is closed.
  void summary(int exit_code);

  std::size_t steps_done() const { return step_times_.size(); }

 private:
  void write_json(const std::string& line);
  void publish_metrics(bool force);

  const TrainOptions& options_;
  train::GptConfig config_;
  bool leader_;
  int ranks_;
  std::vector<std::string> hosts_;
  double peak_flops_;
  std::function<double()> gpu_memory_gib_;
  double tokens_per_step_, flops_per_step_;
  std::FILE* json_ = nullptr;
  std::vector<double> step_times_, exposed_times_;
  double first_loss_, last_loss_;
  metrics::TrainProgress progress_;
  std::chrono::steady_clock::time_point last_publish_{};
};

}  // namespace gpudirect::launcher::train_command
