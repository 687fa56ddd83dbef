// `gpudirect-launch train`: data-parallel GPT training steps on every rank (the cluster's end-to-end
// check). Only the command line and the run's outline live here, so each part (train_options,
// backend_choice, step_reporter, progress_ticker, stop_signal) can change on its own.
#include "command_registry.hpp"

#include "train/backend_choice.hpp"
#include "train/progress_ticker.hpp"
#include "train/step_reporter.hpp"
#include "train/stop_signal.hpp"
#include "train/train_options.hpp"

#include "bootstrap/session.hpp"
#include "reporting/prometheus_textfile.hpp"
#include "train/cuda/epilogue_plan.hpp"
#include "train/data_source.hpp"
#include "train/trainer.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpudirect::launcher {
namespace train_command {
namespace {

// Rank 0 writes the metrics file during the run: refuse a path it cannot write before the first step.
void check_metrics_file(const TrainOptions& o, bool leader) {
  if (!leader || o.metrics_file.empty()) return;
  try {
    metrics::check_writable(o.metrics_file);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

// This rank's share of every step's global batch, from --data.
std::unique_ptr<train::DataSource> make_data(const TrainOptions& o, const train::GptConfig& config,
                                             const bootstrap::LaunchContext& context) {
  const train::BatchShape shape{context.size, context.rank, config.micro_batch, config.grad_accum, config.seq_len, config.vocab};
  if (o.data == "mock") return train::make_mock_data(shape, config.seed, true);
  if (o.data == "mock-uniform") return train::make_mock_data(shape, config.seed, false);
  return train::make_token_file_data(shape, o.data);
}

// Continues from --checkpoint where --resume finds it, else sends rank 0's fresh parameters to every
// rank. Returns whether it resumed.
bool resume_or_start(const TrainOptions& o, train::Trainer& trainer, const train::DataSource& data, bool leader) {
  if (o.resume) {
    const int exists = trainer.broadcast_from_leader(leader && std::filesystem::exists(o.checkpoint) ? 1 : 0);
    if (exists) {
      trainer.load_checkpoint(o.checkpoint, data.describe());
      return true;
    }
    if (leader) std::printf("gpudirect train: --resume: no checkpoint at %s yet, starting at step 0\n", o.checkpoint.c_str());
  }
  trainer.broadcast_initial_parameters();
  return false;
}

}  // namespace

int run_train(const TrainOptions& o, const bootstrap::SessionOptions& session_options) {
  check_options(o);
  const train::BackendDecision backend =
      choose_backend(o.backend, bootstrap::context_from_environment(bootstrap::current_environment()).local_size);
  const bool use_cuda = backend.cuda;
  const train::cuda::AttentionKind attention = attention_for(o, use_cuda, backend.reason);
  const train::cuda::SpeedOptions speed = speed_for(o, use_cuda, backend.reason);  // refuses a CUDA fast path on the CPU model
  const train::GptConfig config = build_config(o);
  if (speed.gemm_epilogues)  // before the session, like every other option error
    if (const std::string why = train::cuda::gemm_epilogues_problem(config); !why.empty()) throw UsageError(why);
  install_stop_handlers();

  bootstrap::Session session = bootstrap::open_session(session_options);
  const bootstrap::LaunchContext& context = session.context;
  const bool leader = context.rank == 0;
  check_metrics_file(o, leader);
  check_ranks_chose_alike(session, o.backend, use_cuda);
  const std::unique_ptr<train::DataSource> data = make_data(o, config, context);
  const train::TrainSettings settings = build_settings(o);
  Training training = set_up_training(o, use_cuda, attention, config, settings, *data, session, session_options);
  train::Trainer& trainer = *training.trainer;
  std::vector<std::string> hosts =
      session.store ? session.store->all_gather("train/hosts", context.hostname) : std::vector<std::string>{context.hostname};
  const bool resumed = resume_or_start(o, trainer, *data, leader);

  StepReporter report(o, config, context, std::move(hosts), training.peak_flops, resumed,
                      use_cuda ? std::function<double()>([] { return gpu_memory_gib(true); }) : std::function<double()>());
  report.start({training.model_description, backend.reason, training.memory_plan, training.communicator->backend_name(), data->describe(),
                settings.zero1, trainer.zero1(), trainer.bucket_count(), training.peak_source, resumed ? trainer.next_step() : -1});
  const auto save = [&](const char* why) {
    const auto start = std::chrono::steady_clock::now();
    trainer.save_checkpoint(o.checkpoint, data->describe());
    report.checkpoint_written(trainer.next_step(), why, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  int status = 0;
  ProgressTicker ticker(trainer, o.steps, config.grad_accum, leader ? o.progress_seconds : 0);
  while (trainer.next_step() < o.steps) {
    ticker.step_started();
    const train::StepResult r = trainer.step(stop_requested());
    ticker.step_finished();
    report.step(r);
    if (r.stop) {
      if (!o.checkpoint.empty()) save("stop signal");
      report.stopped_by_signal(trainer.next_step());
      status = kExitPreempted;
      break;
    }
    if (o.checkpoint_every > 0 && trainer.next_step() % o.checkpoint_every == 0 && trainer.next_step() < o.steps) save("every");
  }
  if (status == 0 && !o.checkpoint.empty() && report.steps_done() > 0) save("end of run");
  report.run_ended(trainer.next_step());

  const std::vector<int> different = trainer.check_parameters_agree();
  if (!different.empty()) {
    report.parameters_differ(different);
    return kExitDiverged;
  }
  report.summary(status);
  training.communicator->synchronize();
  if (session.store) session.store->barrier("train/end");
  return status;
}

}  // namespace train_command

void register_train(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<train_command::TrainOptions>();
  CLI::App* cmd =
      app.add_subcommand("train",
                         "Data-parallel GPT training steps on every rank of the job (the cluster's end-to-end check): loss, step time, "
                         "tokens/s, TFLOP/s, MFU (6N+6LCT FLOPs per token), exposed communication and the straggler rank (compute time "
                         "over 1.2x the median) per step. The model is the fp32 CPU reference with collectives over libfabric on host "
                         "memory, or on GPUs the CUDA model (bf16, NCCL; built where CUDA was found, not yet verified on a GPU). Exit "
                         "codes: 0 ok, 1 failure (I/O, "
                         "communication, refused checkpoint), 6 usage, 8 parameters differ between ranks at the end, 10 stopped by "
                         "SIGTERM/SIGUSR1 after finishing the step (checkpoint written when --checkpoint is given; rerun with --resume).");
  cmd->add_option("--preset", o->preset,
                  "model and batch shape: tiny (L2 H4 C64 T64 V512 B4), gpt2-124m (L12 H12 C768 T1024 V50257 B8), gpt3-5b (L24 H32 C4096 "
                  "T2048 V50257 B4) (default tiny)");
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
  cmd->add_option(
      "--checkpoint", o->checkpoint,
      "checkpoint file: written atomically at the end, every --checkpoint-every steps and on SIGTERM/SIGUSR1 (rank 0 writes it)");
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "also write the checkpoint every N steps (default 0: off)");
  cmd->add_flag("--resume", o->resume,
                "continue from --checkpoint (starts at step 0 when the file does not exist yet); the same settings are required");
  cmd->add_option("--threads", o->threads, "CPU threads per rank (default: the rank's CPUs, shared among local ranks when unbound)");
  cmd->add_option(
      "--backend", o->backend,
      "auto, libfabric (fp32 CPU model, collectives on host memory) or nccl (CUDA model, one GPU per "
      "rank chosen by local rank, NCCL collectives; refused where the build has no CUDA, no GPU is visible, cuBLAS does not load "
      "or the node has more ranks than GPUs); auto picks nccl where all of that holds, else libfabric, and says why");
  cmd->add_option("--attention", o->attention,
                  "the CUDA model's attention: reference (one warp per query row, online softmax, nothing of size T x T stored) or "
                  "tensor-core (cuBLAS strided-batched bf16 GEMMs with fp32 accumulation for q k^T and p v and their backward, a "
                  "fused causal softmax, B x heads x T x T bf16 probabilities kept per layer: see the memory plan). Neither has run "
                  "on a GPU yet, so the default stays reference until the GPU check has compared the two (default reference)");
  for (const train::cuda::SpeedSwitch& s : train::cuda::kSpeedSwitches) cmd->add_flag(std::string("--") + s.name, o->speed.*s.on, s.help);
  cmd->add_option("-J,--json", o->json,
                  "write one JSON object per line: start, every step, each checkpoint written, summary (rank 0; appended on --resume)");
  cmd->add_option("--metrics-file", o->metrics_file,
                  "rank 0 writes loss, step time, tokens/s, MFU and the straggler in the Prometheus text format for node_exporter's "
                  "textfile collector (gpudirect_train_* gauges; a PATH ending in .prom in --collector.textfile.directory), "
                  "replaced atomically after the first step, at most every 5 s and at the end");
  cmd->add_option("--peak-tflops", o->peak_tflops,
                  "peak FLOP/s per rank in TFLOP/s for MFU (default: the GPU's dense bf16 peak for "
                  "the CUDA model, H100 SXM 989; a short sgemm probe for the CPU model)");
  cmd->add_option("--progress-seconds", o->progress_seconds,
                  "print a progress line when a step runs longer than this, 0 for never (default 10)");
  cmd->add_option("--bucket-mib", o->bucket_mib, "gradient bucket size in MiB (default 25, as PyTorch DDP)");
  cmd->add_option("--first-bucket-mib", o->first_bucket_mib, "size of the first (last layers') bucket in MiB (default 1)");
  cmd->callback(
      [o, &context] { context.exit_code = run_command("gpudirect train", [&] { return train_command::run_train(*o, context.session); }); });
}

}  // namespace gpudirect::launcher
