// `gpudirect-launch train`: data-parallel GPT training steps over every rank of the job (the
// cluster's end-to-end check), with per-step loss, throughput, MFU and exposed communication,
// preemption-safe checkpoints, JSON lines for plotting, the straggler of every step and a
// Prometheus metrics file.
#include "command_registry.hpp"

#include "bootstrap/session.hpp"
#include "comm/communicator_factory.hpp"
#include "metrics/straggler.hpp"
#include "metrics/train_metrics.hpp"
#include "train/cpu/cpu_model.hpp"
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
#include "train/cuda/cuda_training.hpp"
#endif
#include "train/data_source.hpp"
#include "train/host_backend.hpp"
#include "train/peak_flops.hpp"
#include "train/trainer.hpp"

#include <nlohmann/json.hpp>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpudirect::launcher {
namespace {

// Exit codes (documented in --help and the README).
constexpr int kExitFailure = 1, kExitUsage = 6, kExitDiverged = 8, kExitPreempted = 10;

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct TrainOptions {
  std::string preset = "tiny";
  std::optional<int> layers, heads, width, seq_len, vocab, micro_batch, grad_accum;
  std::optional<std::uint64_t> seed;
  int steps = 10;
  float lr = 6e-4f, min_lr = -1, weight_decay = 0.1f, grad_clip = 1.0f;
  int warmup = -1, lr_steps = 0;
  std::string data = "mock";
  bool zero1 = false;
  std::string checkpoint;
  int checkpoint_every = 0;
  bool resume = false;
  int threads = 0;
  std::string backend = "auto";
  std::string json, metrics_file;
  double peak_tflops = 0;
  double bucket_mib = 25, first_bucket_mib = 1;
  double progress_seconds = 10;
};

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int signal) { g_stop_signal.store(signal); }

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGUSR1, &action, nullptr);
}

train::GptConfig build_config(const TrainOptions& o) {
  train::GptConfig config;
  try {
    config = train::preset_config(o.preset);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--preset: ") + e.what());
  }
  bool changed = false;
  const auto set = [&](int& field, const std::optional<int>& value) {
    if (value && *value != field) { field = *value; changed = true; }
  };
  set(config.layers, o.layers);
  set(config.heads, o.heads);
  set(config.width, o.width);
  set(config.seq_len, o.seq_len);
  set(config.vocab, o.vocab);
  set(config.micro_batch, o.micro_batch);
  set(config.grad_accum, o.grad_accum);
  if (o.seed) config.seed = *o.seed;
  if (changed) config.preset += "+overrides";
  try {
    train::validate(config);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return config;
}

// CPUs this rank may use: its affinity, shared with the other local ranks when they are not bound.
int default_threads(const bootstrap::LaunchContext& context) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  const int online = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cpus >= online) cpus /= std::max(1, context.local_size);
  return std::max(1, cpus);
}

std::string format_count(double value) {
  char text[32];
  if (value >= 1e9) std::snprintf(text, sizeof text, "%.2fG", value / 1e9);
  else if (value >= 1e6) std::snprintf(text, sizeof text, "%.2fM", value / 1e6);
  else if (value >= 1e3) std::snprintf(text, sizeof text, "%.1fK", value / 1e3);
  else std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

using metrics::median;

// --backend nccl: the CUDA model with NCCL collectives, refused (exit 6) where it cannot run;
// auto: the CUDA model where this build has it and a GPU is visible, else the CPU model over libfabric.
bool choose_cuda_model(const std::string& backend) {
  if (backend == "libfabric") return false;
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
  const std::string problem = train::cuda::device_problem();
  if (backend == "auto") return problem.empty();
  if (!problem.empty())
    throw UsageError("--backend nccl: no CUDA device here (" + problem + "); run on a GPU node, or use --backend libfabric for the CPU model");
  return true;
#else
  if (backend == "nccl")
    throw UsageError("--backend nccl: this gpudirect-launch was built without CUDA (no nvcc, cuBLAS or NCCL when it was configured), so it "
                     "has no CUDA model; rebuild where the CUDA toolkit and NCCL are installed, or use --backend libfabric");
  return false;
#endif
}

// Device memory in use on this rank's GPU (every process on it), 0 without the CUDA model.
double gpu_memory_gib(bool use_cuda) {
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
  if (use_cuda) return static_cast<double>(train::cuda::device_memory_used()) / (1u << 30);
#endif
  (void)use_cuda;
  return 0;
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

double unix_seconds() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// Rank 0's "still working" line while a step runs longer than `interval` (a 5B model on CPU, a slow
// fabric): the step, how long it has run and how many micro-batches are done.
class ProgressTicker {
 public:
  ProgressTicker(const train::Trainer& trainer, int steps, int micro_batches, double interval_s)
      : trainer_(trainer), steps_(steps), micro_batches_(micro_batches), interval_(interval_s) {
    if (interval_s > 0) thread_ = std::thread([this] { run(); });
  }
  ~ProgressTicker() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;
  void step_started() {
    std::lock_guard lock(mutex_);
    started_ = std::chrono::steady_clock::now();
    running_ = true;
  }
  void step_finished() {
    std::lock_guard lock(mutex_);
    running_ = false;
  }

 private:
  void run() {
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
  const train::Trainer& trainer_;
  int steps_, micro_batches_;
  double interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false, running_ = false;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

int run_train(const TrainOptions& o, const bootstrap::SessionOptions& session_options) {
  if (o.steps < 1) throw UsageError("--steps must be at least 1");
  if (o.resume && o.checkpoint.empty()) throw UsageError("--resume needs --checkpoint PATH (the file to continue from)");
  if (o.checkpoint_every < 0) throw UsageError("--checkpoint-every must be 0 (off) or a number of steps");
  if (o.checkpoint_every > 0 && o.checkpoint.empty()) throw UsageError("--checkpoint-every needs --checkpoint PATH");
  if (o.lr <= 0 || o.bucket_mib <= 0 || o.first_bucket_mib <= 0) throw UsageError("--lr and the bucket sizes must be positive");
  if (o.backend != "auto" && o.backend != "libfabric" && o.backend != "nccl")
    throw UsageError("--backend " + o.backend + ": expected auto, libfabric or nccl");
  const bool use_cuda = choose_cuda_model(o.backend);
  const train::GptConfig config = build_config(o);
  install_stop_handlers();

  bootstrap::Session session = bootstrap::open_session(session_options);
  const bootstrap::LaunchContext& context = session.context;
  const bool leader = context.rank == 0;
  // Rank 0 writes the metrics file during the run: refuse a path it cannot write before the first step.
  if (leader && !o.metrics_file.empty()) {
    try {
      metrics::check_writable(o.metrics_file);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }
  // auto decides per rank: every rank must have decided the same (a job with GPUs on some nodes only).
  if (session.store && o.backend == "auto") {
    const std::vector<std::string> choices = session.store->all_gather("train/backend", use_cuda ? "nccl" : "libfabric");
    for (std::size_t r = 0; r < choices.size(); ++r)
      if (choices[r] != choices[0])
        throw UsageError("--backend auto: rank 0 chose " + choices[0] + " but rank " + std::to_string(r) + " chose " + choices[r] +
                         " (GPUs visible on some ranks only); pass --backend nccl or --backend libfabric");
  }
  train::BatchShape shape{context.size, context.rank, config.micro_batch, config.grad_accum, config.seq_len, config.vocab};
  std::unique_ptr<train::DataSource> data;
  if (o.data == "mock") data = train::make_mock_data(shape, config.seed, true);
  else if (o.data == "mock-uniform") data = train::make_mock_data(shape, config.seed, false);
  else data = train::make_token_file_data(shape, o.data);

  train::TrainSettings settings;
  settings.schedule.lr = o.lr;
  settings.schedule.min_lr = o.min_lr >= 0 ? o.min_lr : o.lr / 10;
  settings.schedule.total = o.lr_steps > 0 ? o.lr_steps : o.steps;
  settings.schedule.warmup = o.warmup >= 0 ? o.warmup : std::min(settings.schedule.total / 10, 100);
  settings.adamw.weight_decay = o.weight_decay;
  settings.grad_clip = o.grad_clip;
  settings.zero1 = o.zero1;
  settings.bucket_bytes = static_cast<std::size_t>(o.bucket_mib * (1 << 20));
  settings.first_bucket_bytes = static_cast<std::size_t>(o.first_bucket_mib * (1 << 20));

  // Peak FLOP/s per rank for MFU: given, the GPU's dense bf16 peak, or measured with a short sgemm probe.
  double peak = o.peak_tflops * 1e12;
  std::string peak_source = "--peak-tflops";
  std::unique_ptr<comm::Communicator> communicator;
  std::unique_ptr<train::Model> model;
  std::unique_ptr<train::Trainer> trainer_owner;
  std::string model_description;
  if (use_cuda) {
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
    const train::cuda::DeviceInfo device = train::cuda::select_device(context.local_rank);
    if (peak <= 0) {
      if (device.peak_bf16_flops <= 0)
        throw UsageError("no dense bf16 peak is known for " + device.name + ": give --peak-tflops (per GPU) for MFU");
      peak = device.peak_bf16_flops;
      peak_source = "dense bf16 peak of " + device.name;
    }
    communicator = comm::make_communicator({"nccl", session_options.timeout, "gpudirect train"}, session);
    model = train::cuda::make_cuda_model(config);
    trainer_owner = std::make_unique<train::Trainer>(*model, *data, settings, train::cuda::make_cuda_backend(*model, *communicator, settings));
    model_description = "CUDA model (bf16 matmuls and activations, fp32 master weights and AdamW state; NOT YET VERIFIED ON A GPU, "
                        "see tests/gpu/check_cuda_training.sh) on GPU " + std::to_string(device.index) + " [" + device.pci_bus + "] " +
                        device.name;
#endif
  } else {
    communicator = comm::make_communicator({"libfabric", session_options.timeout, "gpudirect train"}, session);
    const int threads = o.threads > 0 ? o.threads : default_threads(context);
    // Gradients in the communicator's memory: the host's ranks reduce them reading each other's in place.
    comm::Communicator& comm = *communicator;
    model = train::make_cpu_model(config, threads, {[&comm](std::size_t bytes) { return comm.allocate(bytes); }, [&comm](void* buffer) { comm.release(buffer); }});
    train::initialize_parameters(config, model->parameters(), config.seed);
    trainer_owner = std::make_unique<train::Trainer>(*model, *data, settings, train::make_host_backend(*model, *communicator, settings));
    model_description = "fp32 CPU model, " + std::to_string(threads) + " thread(s) per rank";
    if (peak <= 0) {
      peak = train::measure_sgemm_flops();
      double sum = peak;
      if (context.size > 1) communicator->all_reduce(&sum, &sum, 1, comm::DataType::float64, comm::ReduceOp::sum)->wait();
      peak = sum / context.size;
      peak_source = "measured with sgemm";
    }
  }
  train::Trainer& trainer = *trainer_owner;
  const std::vector<std::string> hosts =
      session.store ? session.store->all_gather("train/hosts", context.hostname) : std::vector<std::string>{context.hostname};

  bool resumed = false;
  if (o.resume) {
    const int exists = trainer.broadcast_from_leader(leader && std::filesystem::exists(o.checkpoint) ? 1 : 0);
    if (exists) {
      trainer.load_checkpoint(o.checkpoint, data->describe());
      resumed = true;
    } else if (leader) {
      std::printf("gpudirect train: --resume: no checkpoint at %s yet, starting at step 0\n", o.checkpoint.c_str());
    }
  }
  if (!resumed) trainer.broadcast_initial_parameters();

  const double n_params = static_cast<double>(train::parameter_count(config));
  const double tokens_per_step = static_cast<double>(context.size) * config.micro_batch * config.grad_accum * config.seq_len;
  const double flops_per_step = train::flops_per_token(config) * tokens_per_step;
  std::FILE* json = nullptr;
  if (leader && !o.json.empty()) {
    json = std::fopen(o.json.c_str(), resumed ? "a" : "w");
    if (json == nullptr) throw std::runtime_error("-J " + o.json + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  const auto write_json = [&](const nlohmann::json& line) {
    if (json == nullptr) return;
    std::fprintf(json, "%s\n", line.dump().c_str());
    std::fflush(json);
  };
  if (leader) {
    std::printf("gpudirect train: %s model (L%d H%d C%d T%d V%d), %s parameters, %d rank(s) on %zu host(s), "
                "micro-batch %d x grad-accum %d x %d ranks = %s tokens/step\n",
                config.preset.c_str(), config.layers, config.heads, config.width, config.seq_len, config.vocab,
                format_count(n_params).c_str(), context.size, std::set<std::string>(hosts.begin(), hosts.end()).size(),
                config.micro_batch, config.grad_accum, context.size, format_count(tokens_per_step).c_str());
    std::printf("gpudirect train: backend %s -> %s, collectives over %s; data %s; %s; %zu gradient buckets; "
                "peak %.3f TFLOP/s per rank (%s)\n",
                o.backend.c_str(), model_description.c_str(), communicator->backend_name().c_str(), data->describe().c_str(),
                settings.zero1 && context.size > 1 ? "ZeRO-1 (sharded AdamW state)" : "replicated AdamW state",
                trainer.bucket_count(), peak / 1e12, peak_source.c_str());
    if (use_cuda) std::printf("gpudirect train: GPU memory in use after allocation: %.2f GiB (rank 0's GPU, all processes on it)\n",
                              gpu_memory_gib(use_cuda));
    if (resumed) std::printf("gpudirect train: resumed from %s at step %ld\n", o.checkpoint.c_str(), trainer.next_step());
    std::fflush(stdout);
    write_json({{"type", "start"}, {"preset", config.preset}, {"layers", config.layers}, {"heads", config.heads},
                {"width", config.width}, {"seq_len", config.seq_len}, {"vocab", config.vocab}, {"parameters", n_params},
                {"ranks", context.size}, {"tokens_per_step", tokens_per_step}, {"zero1", settings.zero1},
                {"peak_tflops_per_rank", peak / 1e12}, {"resumed_at", resumed ? trainer.next_step() : 0}});
  }

  std::vector<double> step_times, exposed_times;
  double first_loss = NAN, last_loss = NAN;
  int status = 0;
  metrics::TrainProgress progress;
  progress.preset = config.preset;
  if (const char* job = std::getenv("SLURM_JOB_ID")) progress.job_id = job;
  progress.hosts = hosts;
  progress.planned_steps = o.steps;
  // The file is rewritten (atomically: a temporary file, fsync, rename) after the first step, then
  // at most every 5 s and at the end, so short steps do not spend their time on fsync.
  auto last_publish = std::chrono::steady_clock::time_point{};
  const auto publish = [&](bool force) {
    if (!leader || o.metrics_file.empty() || progress.step == 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && last_publish != std::chrono::steady_clock::time_point{} && now - last_publish < std::chrono::seconds(5)) return;
    last_publish = now;
    progress.updated_unix_seconds = unix_seconds();
    try {
      metrics::train_metrics(progress).write(o.metrics_file);
    } catch (const std::runtime_error& e) {
      // Monitoring must not end a training run (a full disk, a directory removed under it).
      std::fprintf(stderr, "gpudirect train: warning: %s; training goes on (the file is tried again in 5 s and at the end)\n", e.what());
    }
  };
  const auto save = [&](const char* why) {
    const auto start = std::chrono::steady_clock::now();
    trainer.save_checkpoint(o.checkpoint, data->describe());
    if (leader) {
      std::printf("gpudirect train: checkpoint %s written at step %ld (%s, %.2f s)\n", o.checkpoint.c_str(), trainer.next_step(), why,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      std::fflush(stdout);
    }
  };
  ProgressTicker ticker(trainer, o.steps, config.grad_accum, leader ? o.progress_seconds : 0);
  while (trainer.next_step() < o.steps) {
    ticker.step_started();
    const train::StepResult r = trainer.step(g_stop_signal.load() != 0);
    ticker.step_finished();
    const double slowest = *std::max_element(r.rank_seconds.begin(), r.rank_seconds.end());
    const double exposed = median(r.rank_exposed_seconds);
    step_times.push_back(slowest);
    exposed_times.push_back(exposed);
    if (std::isnan(first_loss)) first_loss = r.loss;
    last_loss = r.loss;
    if (leader) {
      const double tokens_per_s = tokens_per_step / slowest;
      const double tflops = flops_per_step / slowest / 1e12;
      const double mfu = flops_per_step / slowest / (peak * context.size);
      std::printf("step %5ld/%d | loss %.6f | lr %.3e | norm %.4f | %8.1f ms | %9s tok/s | %7.3f TFLOP/s | MFU %5.1f%% | exposed comm %6.1f ms (%4.1f%%)\n",
                  r.step + 1, o.steps, r.loss, static_cast<double>(r.lr), r.grad_norm, slowest * 1e3, format_count(tokens_per_s).c_str(), tflops,
                  mfu * 100, exposed * 1e3, 100 * exposed / slowest);
      const std::vector<double> compute = compute_seconds(r);
      const metrics::SlowestRank slow = *metrics::slowest_rank(compute, metrics::kTrainStragglerRule);
      const std::string& slow_host = hosts[slow.rank];
      if (slow.straggler)
        std::printf("      slow rank: rank %zu on %s computed %.1f ms of the step, median %.1f ms\n", slow.rank, slow_host.c_str(), slow.seconds * 1e3,
                    slow.median_seconds * 1e3);
      std::fflush(stdout);
      const auto in_ms = [](const std::vector<double>& seconds) {
        std::vector<double> ms;
        for (const double s : seconds) ms.push_back(s * 1e3);
        return ms;
      };
      const nlohmann::json straggler = slow.straggler ? nlohmann::json{{"rank", slow.rank}, {"host", slow_host}, {"compute_ms", slow.seconds * 1e3},
                                                                        {"median_compute_ms", slow.median_seconds * 1e3}}
                                                      : nlohmann::json(nullptr);
      write_json({{"type", "step"}, {"step", r.step + 1}, {"loss", r.loss}, {"lr", r.lr}, {"grad_norm", r.grad_norm},
                  {"step_ms", slowest * 1e3}, {"tokens_per_s", tokens_per_s}, {"tflops", tflops}, {"mfu", mfu},
                  {"exposed_comm_ms", exposed * 1e3}, {"rank_step_ms", in_ms(r.rank_seconds)}, {"rank_compute_ms", in_ms(compute)},
                  {"slowest_rank", slow.rank}, {"slowest_host", slow_host}, {"straggler", straggler}});

      progress.step = r.step + 1;
      progress.loss = r.loss;
      progress.step_seconds = slowest;
      const std::size_t skip = step_times.size() > 1 ? 1 : 0;
      progress.median_step_seconds = median(std::vector<double>(step_times.begin() + static_cast<long>(skip), step_times.end()));
      progress.tokens_per_second = tokens_per_s;
      progress.mfu = mfu;
      progress.exposed_comm_seconds = exposed;
      progress.slowest = slow;
      if (slow.straggler) ++progress.straggler_steps[slow.rank];
      publish(false);
    }
    if (r.stop) {
      if (!o.checkpoint.empty()) save("stop signal");
      if (leader)
        std::printf("gpudirect train: stopped by a signal after step %ld; %s\n", trainer.next_step(),
                    o.checkpoint.empty() ? "no --checkpoint given, nothing saved"
                                         : ("rerun the same command with --resume to continue from " + o.checkpoint).c_str());
      status = kExitPreempted;
      break;
    }
    if (o.checkpoint_every > 0 && trainer.next_step() % o.checkpoint_every == 0 && trainer.next_step() < o.steps) save("every");
  }
  if (status == 0 && !o.checkpoint.empty() && !step_times.empty()) save("end of run");
  publish(true);
  if (leader && step_times.empty())
    std::printf("gpudirect train: nothing to do: the checkpoint is at step %ld and --steps is %d\n", trainer.next_step(), o.steps);

  const std::vector<int> different = trainer.check_parameters_agree();
  if (!different.empty()) {
    if (leader) {
      std::string list;
      for (const int r : different) list += (list.empty() ? "" : ", ") + std::to_string(r) + " (" + hosts[static_cast<std::size_t>(r)] + ")";
      std::fprintf(stderr, "gpudirect train: parameters differ from rank 0's on rank(s) %s: data parallelism diverged\n", list.c_str());
    }
    if (json) std::fclose(json);
    return kExitDiverged;
  }
  if (leader && !step_times.empty()) {
    // The first step pays for page faults and thread start-up: leave it out of the averages when there are more.
    const std::size_t skip = step_times.size() > 1 ? 1 : 0;
    const std::vector<double> steady(step_times.begin() + static_cast<long>(skip), step_times.end());
    const std::vector<double> steady_exposed(exposed_times.begin() + static_cast<long>(skip), exposed_times.end());
    const double step_s = median(steady);
    const double exposed_s = median(steady_exposed);
    const double mfu = flops_per_step / step_s / (peak * context.size);
    std::printf("gpudirect train: summary: %zu step(s), loss %.4f -> %.4f, median step %.1f ms, %s tokens/s, %.3f TFLOP/s, MFU %.1f%%, "
                "exposed comm %.1f ms (%.1f%% of the step), parameters identical on all %d rank(s)\n",
                step_times.size(), first_loss, last_loss, step_s * 1e3, format_count(tokens_per_step / step_s).c_str(),
                flops_per_step / step_s / 1e12, mfu * 100, exposed_s * 1e3, 100 * exposed_s / step_s, context.size);
    nlohmann::json summary = {{"type", "summary"}, {"steps", step_times.size()}, {"first_loss", first_loss}, {"last_loss", last_loss},
                              {"median_step_ms", step_s * 1e3}, {"tokens_per_s", tokens_per_step / step_s},
                              {"tflops", flops_per_step / step_s / 1e12}, {"mfu", mfu}, {"median_exposed_comm_ms", exposed_s * 1e3},
                              {"exit_code", status}};
    if (use_cuda) {
      const double gib = gpu_memory_gib(use_cuda);
      std::printf("gpudirect train: GPU memory in use at the end: %.2f GiB (rank 0's GPU, all processes on it)\n", gib);
      summary["gpu_memory_gib"] = gib;
    }
    write_json(summary);
  }
  if (json) std::fclose(json);
  communicator->synchronize();
  if (session.store) session.store->barrier("train/end");
  return status;
}

}  // namespace

void register_train(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train",
      "Data-parallel GPT training steps on every rank of the job (the cluster's end-to-end check): loss, step time, "
      "tokens/s, TFLOP/s, MFU (6N+6LCT FLOPs per token), exposed communication and the straggler rank (compute time "
      "over 1.2x the median) per step. The model is the fp32 CPU reference with collectives over libfabric on host "
      "memory, or on GPUs the CUDA model (bf16, NCCL; built where CUDA was found, not yet verified on a GPU). Exit codes: 0 ok, 1 failure (I/O, "
      "communication, refused checkpoint), 6 usage, 8 parameters differ between ranks at the end, 10 stopped by "
      "SIGTERM/SIGUSR1 after finishing the step (checkpoint written when --checkpoint is given; rerun with --resume).");
  cmd->add_option("--preset", o->preset, "model and batch shape: tiny (L2 H4 C64 T64 V512 B4), gpt2-124m (L12 H12 C768 T1024 V50257 B8), gpt3-5b (L24 H32 C4096 T2048 V50257 B4) (default tiny)");
  cmd->add_option("--layers", o->layers, "override the preset's layer count");
  cmd->add_option("--heads", o->heads, "override the attention heads");
  cmd->add_option("--width", o->width, "override the model width C (the MLP is 4C)");
  cmd->add_option("--seq-len", o->seq_len, "override the sequence length T");
  cmd->add_option("--vocab", o->vocab, "override the vocabulary size V");
  cmd->add_option("--micro-batch", o->micro_batch, "override sequences per rank per forward/backward");
  cmd->add_option("--grad-accum", o->grad_accum, "override micro-batches per optimizer step");
  cmd->add_option("--seed", o->seed, "seed of the initial weights and the mock data (default 1337)");
  cmd->add_option("--steps", o->steps, "optimizer steps to run in total, counting steps done before a --resume (default 10)");
  cmd->add_option("--lr", o->lr, "peak learning rate (default 6e-4)");
  cmd->add_option("--min-lr", o->min_lr, "learning rate at the end of the cosine decay (default lr/10)");
  cmd->add_option("--warmup", o->warmup, "linear warmup steps (default 10% of the schedule, at most 100)");
  cmd->add_option("--lr-steps", o->lr_steps, "length of the cosine schedule (default --steps)");
  cmd->add_option("--weight-decay", o->weight_decay, "AdamW decoupled weight decay on matrices and embeddings (default 0.1)");
  cmd->add_option("--grad-clip", o->grad_clip, "clip the global gradient norm to this, 0 for off (default 1.0)");
  cmd->add_option("--data", o->data,
                  "mock (learnable sequences: the loss falls), mock-uniform (uniform random tokens), or FILE: uint16 tokens, "
                  "either llm.c's .bin (256 int32 header, magic 20240520, version 1) or a raw uint16 file as nanoGPT's "
                  "train.bin; rank r reads its own sequences of every step's global batch (default mock)");
  cmd->add_flag("--zero1", o->zero1, "ZeRO-1: reduce-scatter gradients, shard the AdamW state, all-gather parameters");
  cmd->add_option("--checkpoint", o->checkpoint, "checkpoint file: written atomically at the end, every --checkpoint-every steps and on SIGTERM/SIGUSR1 (rank 0 writes it)");
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "also write the checkpoint every N steps (default 0: off)");
  cmd->add_flag("--resume", o->resume, "continue from --checkpoint (starts at step 0 when the file does not exist yet); the same settings are required");
  cmd->add_option("--threads", o->threads, "CPU threads per rank (default: the rank's CPUs, shared among local ranks when unbound)");
  cmd->add_option("--backend", o->backend, "auto, libfabric (fp32 CPU model, collectives on host memory) or nccl (CUDA model, one GPU per "
                  "rank chosen by local rank, NCCL collectives; refused where the build has no CUDA or no GPU is visible); auto picks "
                  "nccl when this build has the CUDA model and a GPU is visible, else libfabric");
  cmd->add_option("-J,--json", o->json, "write one JSON object per line: start, every step, summary (rank 0; appended on --resume)");
  cmd->add_option("--metrics-file", o->metrics_file,
                  "rank 0 writes loss, step time, tokens/s, MFU and the straggler in the Prometheus text format for node_exporter's "
                  "textfile collector (gpudirect_train_* gauges; a PATH ending in .prom in --collector.textfile.directory), "
                  "replaced atomically after the first step, at most every 5 s and at the end");
  cmd->add_option("--peak-tflops", o->peak_tflops, "peak FLOP/s per rank in TFLOP/s for MFU (default: the GPU's dense bf16 peak for "
                  "the CUDA model, H100 SXM 989; a short sgemm probe for the CPU model)");
  cmd->add_option("--progress-seconds", o->progress_seconds, "print a progress line when a step runs longer than this, 0 for never (default 10)");
  cmd->add_option("--bucket-mib", o->bucket_mib, "gradient bucket size in MiB (default 25, as PyTorch DDP)");
  cmd->add_option("--first-bucket-mib", o->first_bucket_mib, "size of the first (last layers') bucket in MiB (default 1)");
  cmd->callback([o, &context] {
    int& exit_code = context.exit_code;
    try {
      exit_code = run_train(*o, context.session);
    } catch (const UsageError& e) {
      std::fprintf(stderr, "gpudirect train: %s\n", e.what());
      exit_code = kExitUsage;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudirect train: %s\n", e.what());
      exit_code = kExitFailure;
    }
  });
}

}  // namespace gpudirect::launcher
