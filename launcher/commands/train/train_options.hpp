// What `gpudirect-launch train` was asked, and the checks that refuse a bad request (exit 6) before
// any rank opens a session, so a typo costs no rendezvous and no allocation.
#pragma once

#include "command_errors.hpp"
#include "train/cuda/attention_kind.hpp"
#include "train/cuda/speed_options.hpp"
#include "train/gpt_config.hpp"
#include "train/train_settings.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace gpudirect::launcher::train_command {

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
  std::string attention = "reference";
  // The CUDA model's fast paths, one flag each (kSpeedSwitches, speed_options.hpp); speed_for checks them.
  train::cuda::SpeedOptions speed;
  std::string json, metrics_file;
  double peak_tflops = 0;
  double bucket_mib = 25, first_bucket_mib = 1;
  double progress_seconds = 10;
};

// Throws UsageError naming the option: steps, checkpoint and resume combinations, the learning rate
// and bucket sizes, the --backend and --attention values.
void check_options(const TrainOptions& o);

// The attention --attention names, once the backend is known: the tensor-core one is a kernel of the
// CUDA model, so asking for it on the CPU model is a UsageError (backend_reason says why that model).
train::cuda::AttentionKind attention_for(const TrainOptions& o, bool use_cuda, const std::string& backend_reason);

// The CUDA model's fast paths the switches ask for (speed_options.hpp: --pad-vocab, ...). Each is a
// kernel or layout of the CUDA model, so asking for one on the CPU model is a UsageError naming it.
train::cuda::SpeedOptions speed_for(const TrainOptions& o, bool use_cuda, const std::string& backend_reason);

// The preset with the overrides ("+overrides" appended to its name when any changed it). Throws
// UsageError for an unknown preset or a shape the model cannot take.
train::GptConfig build_config(const TrainOptions& o);

// The schedule (min_lr lr/10, warmup 10% up to 100 steps, length --steps unless given), AdamW,
// clipping, ZeRO-1 and the bucket sizes.
train::TrainSettings build_settings(const TrainOptions& o);

}  // namespace gpudirect::launcher::train_command
