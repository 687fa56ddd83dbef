#include "train/step_reporter.hpp"

#include "reporting/straggler.hpp"
#include "train/peak_flops.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>

namespace gpudirect::launcher::train_command {
namespace {

using metrics::median;

std::string format_count(double value) {
  char text[32];
  if (value >= 1e9)
    std::snprintf(text, sizeof text, "%.2fG", value / 1e9);
  else if (value >= 1e6)
    std::snprintf(text, sizeof text, "%.2fM", value / 1e6);
  else if (value >= 1e3)
    std::snprintf(text, sizeof text, "%.1fK", value / 1e3);
  else
    std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

// The time each rank computed in a step: its step minus the communication it waited for. The
// gradient all-reduce makes every rank's wall step time about the same, so a slow rank shows here
// (the others wait for it, it waits for nobody).
std::vector<double> compute_seconds(const train::StepResult& r) {
  std::vector<double> out;
  for (std::size_t i = 0; i < r.rank_seconds.size(); ++i)
    out.push_back(std::max(0.0, r.rank_seconds[i] - (i < r.rank_exposed_seconds.size() ? r.rank_exposed_seconds[i] : 0.0)));
  return out;
}

std::vector<double> in_ms(const std::vector<double>& seconds) {
  std::vector<double> ms;
  for (const double s : seconds) ms.push_back(s * 1e3);
  return ms;
}

double unix_seconds() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// The first step pays for page faults and thread start-up: leave it out of the medians when there are more.
std::vector<double> steady(const std::vector<double>& times) {
  const std::size_t skip = times.size() > 1 ? 1 : 0;
  return std::vector<double>(times.begin() + static_cast<long>(skip), times.end());
}

}  // namespace

StepReporter::StepReporter(const TrainOptions& options, const train::GptConfig& config, const bootstrap::LaunchContext& context,
                           std::vector<std::string> hosts, double peak_flops, bool resumed, std::function<double()> gpu_memory_gib)
    : options_(options),
      config_(config),
      leader_(context.rank == 0),
      ranks_(context.size),
      hosts_(std::move(hosts)),
      peak_flops_(peak_flops),
      gpu_memory_gib_(std::move(gpu_memory_gib)),
      tokens_per_step_(static_cast<double>(context.size) * config.micro_batch * config.grad_accum * config.seq_len),
      flops_per_step_(train::flops_per_token(config) * tokens_per_step_),
      first_loss_(NAN),
      last_loss_(NAN) {
  if (leader_ && !options.json.empty()) {
    json_ = std::fopen(options.json.c_str(), resumed ? "a" : "w");
    if (json_ == nullptr) throw std::runtime_error("-J " + options.json + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  progress_.preset = config.preset;
  if (const char* job = std::getenv("SLURM_JOB_ID")) progress_.job_id = job;
  progress_.hosts = hosts_;
  progress_.planned_steps = options.steps;
}

StepReporter::~StepReporter() {
  if (json_ != nullptr) std::fclose(json_);
}

void StepReporter::write_json(const std::string& line) {
  if (json_ == nullptr) return;
  std::fprintf(json_, "%s\n", line.c_str());
  std::fflush(json_);
}

void StepReporter::start(const RunStart& run) {
  if (!leader_) return;
  const double n_params = static_cast<double>(train::parameter_count(config_));
  const bool resumed = run.resumed_at >= 0;
  std::printf(
      "gpudirect train: %s model (L%d H%d C%d T%d V%d), %s parameters, %d rank(s) on %zu host(s), "
      "micro-batch %d x grad-accum %d x %d ranks = %s tokens/step\n",
      config_.preset.c_str(), config_.layers, config_.heads, config_.width, config_.seq_len, config_.vocab, format_count(n_params).c_str(),
      ranks_, std::set<std::string>(hosts_.begin(), hosts_.end()).size(), config_.micro_batch, config_.grad_accum, ranks_,
      format_count(tokens_per_step_).c_str());
  const std::string why = run.backend_reason.empty() ? "" : " (" + run.backend_reason + ")";
  std::printf(
      "gpudirect train: backend %s%s -> %s, collectives over %s; data %s; %s; %zu gradient buckets; "
      "peak %.3f TFLOP/s per rank (%s)\n",
      options_.backend.c_str(), why.c_str(), run.model_description.c_str(), run.collectives.c_str(), run.data.c_str(),
      run.sharded ? "ZeRO-1 (sharded AdamW state)" : "replicated AdamW state", run.buckets, peak_flops_ / 1e12, run.peak_source.c_str());
  if (!run.memory_plan.empty()) std::printf("gpudirect train: %s\n", run.memory_plan.c_str());
  if (gpu_memory_gib_)
    std::printf("gpudirect train: GPU memory in use after allocation: %.2f GiB (rank 0's GPU, all processes on it)\n", gpu_memory_gib_());
  if (resumed) std::printf("gpudirect train: resumed from %s at step %ld\n", options_.checkpoint.c_str(), run.resumed_at);
  std::fflush(stdout);
  write_json(nlohmann::json{{"type", "start"},
                            {"preset", config_.preset},
                            {"layers", config_.layers},
                            {"heads", config_.heads},
                            {"width", config_.width},
                            {"seq_len", config_.seq_len},
                            {"vocab", config_.vocab},
                            {"parameters", n_params},
                            {"ranks", ranks_},
                            {"tokens_per_step", tokens_per_step_},
                            {"zero1", run.zero1},
                            {"peak_tflops_per_rank", peak_flops_ / 1e12},
                            {"resumed_at", resumed ? run.resumed_at : 0}}
                 .dump());
}

void StepReporter::step(const train::StepResult& r) {
  const double slowest = *std::max_element(r.rank_seconds.begin(), r.rank_seconds.end());
  const double exposed = median(r.rank_exposed_seconds);
  step_times_.push_back(slowest);
  exposed_times_.push_back(exposed);
  if (std::isnan(first_loss_)) first_loss_ = r.loss;
  last_loss_ = r.loss;
  if (!leader_) return;
  const double tokens_per_s = tokens_per_step_ / slowest;
  const double tflops = flops_per_step_ / slowest / 1e12;
  const double mfu = flops_per_step_ / slowest / (peak_flops_ * ranks_);
  std::printf(
      "step %5ld/%d | loss %.6f | lr %.3e | norm %.4f | %8.1f ms | %9s tok/s | %7.3f TFLOP/s | MFU %5.1f%% | exposed comm %6.1f ms "
      "(%4.1f%%)\n",
      r.step + 1, options_.steps, r.loss, static_cast<double>(r.lr), r.grad_norm, slowest * 1e3, format_count(tokens_per_s).c_str(), tflops,
      mfu * 100, exposed * 1e3, 100 * exposed / slowest);
  const std::vector<double> compute = compute_seconds(r);
  const metrics::SlowestRank slow = *metrics::slowest_rank(compute, metrics::kTrainStragglerRule);
  const std::string& slow_host = hosts_[slow.rank];
  if (slow.straggler)
    std::printf("      slow rank: rank %zu on %s computed %.1f ms of the step, median %.1f ms\n", slow.rank, slow_host.c_str(),
                slow.seconds * 1e3, slow.median_seconds * 1e3);
  std::fflush(stdout);
  const nlohmann::json straggler = slow.straggler ? nlohmann::json{{"rank", slow.rank},
                                                                   {"host", slow_host},
                                                                   {"compute_ms", slow.seconds * 1e3},
                                                                   {"median_compute_ms", slow.median_seconds * 1e3}}
                                                  : nlohmann::json(nullptr);
  write_json(nlohmann::json{{"type", "step"},
                            {"step", r.step + 1},
                            {"loss", r.loss},
                            {"lr", r.lr},
                            {"grad_norm", r.grad_norm},
                            {"step_ms", slowest * 1e3},
                            {"tokens_per_s", tokens_per_s},
                            {"tflops", tflops},
                            {"mfu", mfu},
                            {"exposed_comm_ms", exposed * 1e3},
                            {"rank_step_ms", in_ms(r.rank_seconds)},
                            {"rank_compute_ms", in_ms(compute)},
                            {"slowest_rank", slow.rank},
                            {"slowest_host", slow_host},
                            {"straggler", straggler}}
                 .dump());

  progress_.step = r.step + 1;
  progress_.loss = r.loss;
  progress_.step_seconds = slowest;
  progress_.median_step_seconds = median(steady(step_times_));
  progress_.tokens_per_second = tokens_per_s;
  progress_.mfu = mfu;
  progress_.exposed_comm_seconds = exposed;
  progress_.slowest = slow;
  if (slow.straggler) ++progress_.straggler_steps[slow.rank];
  publish_metrics(false);
}

// The file is rewritten (atomically: a temporary file, fsync, rename) after the first step, then at
// most every 5 s and at the end, so short steps do not spend their time on fsync.
void StepReporter::publish_metrics(bool force) {
  if (!leader_ || options_.metrics_file.empty() || progress_.step == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && last_publish_ != std::chrono::steady_clock::time_point{} && now - last_publish_ < std::chrono::seconds(5)) return;
  last_publish_ = now;
  progress_.updated_unix_seconds = unix_seconds();
  try {
    metrics::train_metrics(progress_).write(options_.metrics_file);
  } catch (const std::runtime_error& e) {
    // Monitoring must not end a training run (a full disk, a directory removed under it).
    std::fprintf(stderr, "gpudirect train: warning: %s; training goes on (the file is tried again in 5 s and at the end)\n", e.what());
  }
}

void StepReporter::checkpoint_written(long step, const char* why, double seconds) {
  if (!leader_) return;
  std::printf("gpudirect train: checkpoint %s written at step %ld (%s, %.2f s)\n", options_.checkpoint.c_str(), step, why, seconds);
  std::fflush(stdout);
  write_json(nlohmann::json{{"type", "checkpoint"}, {"step", step}, {"why", why}, {"seconds", seconds}}.dump());
}

void StepReporter::stopped_by_signal(long step) {
  if (!leader_) return;
  std::printf("gpudirect train: stopped by a signal after step %ld; %s\n", step,
              options_.checkpoint.empty() ? "no --checkpoint given, nothing saved"
                                          : ("rerun the same command with --resume to continue from " + options_.checkpoint).c_str());
}

void StepReporter::run_ended(long next_step) {
  publish_metrics(true);
  if (leader_ && step_times_.empty())
    std::printf("gpudirect train: nothing to do: the checkpoint is at step %ld and --steps is %d\n", next_step, options_.steps);
}

void StepReporter::parameters_differ(const std::vector<int>& ranks) {
  if (!leader_) return;
  std::string list;
  for (const int r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r) + " (" + hosts_[static_cast<std::size_t>(r)] + ")";
  std::fprintf(stderr, "gpudirect train: parameters differ from rank 0's on rank(s) %s: data parallelism diverged\n", list.c_str());
}

void StepReporter::summary(int exit_code) {
  if (leader_ && !step_times_.empty()) {
    const double step_s = median(steady(step_times_));
    const double exposed_s = median(steady(exposed_times_));
    const double mfu = flops_per_step_ / step_s / (peak_flops_ * ranks_);
    std::printf(
        "gpudirect train: summary: %zu step(s), loss %.4f -> %.4f, median step %.1f ms, %s tokens/s, %.3f TFLOP/s, MFU %.1f%%, "
        "exposed comm %.1f ms (%.1f%% of the step), parameters identical on all %d rank(s)\n",
        step_times_.size(), first_loss_, last_loss_, step_s * 1e3, format_count(tokens_per_step_ / step_s).c_str(),
        flops_per_step_ / step_s / 1e12, mfu * 100, exposed_s * 1e3, 100 * exposed_s / step_s, ranks_);
    nlohmann::json summary = {{"type", "summary"},
                              {"steps", step_times_.size()},
                              {"first_loss", first_loss_},
                              {"last_loss", last_loss_},
                              {"median_step_ms", step_s * 1e3},
                              {"tokens_per_s", tokens_per_step_ / step_s},
                              {"tflops", flops_per_step_ / step_s / 1e12},
                              {"mfu", mfu},
                              {"median_exposed_comm_ms", exposed_s * 1e3},
                              {"exit_code", exit_code}};
    if (gpu_memory_gib_) {
      const double gib = gpu_memory_gib_();
      std::printf("gpudirect train: GPU memory in use at the end: %.2f GiB (rank 0's GPU, all processes on it)\n", gib);
      summary["gpu_memory_gib"] = gib;
    }
    write_json(summary.dump());
  }
  if (json_ != nullptr) std::fclose(json_);
  json_ = nullptr;
}

}  // namespace gpudirect::launcher::train_command
