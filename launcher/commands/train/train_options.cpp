#include "train/train_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace gpudirect::launcher::train_command {

void check_options(const TrainOptions& o) {
  if (o.steps < 1) throw UsageError("--steps must be at least 1");
  if (o.resume && o.checkpoint.empty()) throw UsageError("--resume needs --checkpoint PATH (the file to continue from)");
  if (o.checkpoint_every < 0) throw UsageError("--checkpoint-every must be 0 (off) or a number of steps");
  if (o.checkpoint_every > 0 && o.checkpoint.empty()) throw UsageError("--checkpoint-every needs --checkpoint PATH");
  if (o.lr <= 0 || o.bucket_mib <= 0 || o.first_bucket_mib <= 0) throw UsageError("--lr and the bucket sizes must be positive");
  if (o.backend != "auto" && o.backend != "libfabric" && o.backend != "nccl")
    throw UsageError("--backend " + o.backend + ": expected auto, libfabric or nccl");
  if (!train::cuda::parse_attention(o.attention)) throw UsageError("--attention " + o.attention + ": expected reference or tensor-core");
}

train::cuda::AttentionKind attention_for(const TrainOptions& o, bool use_cuda, const std::string& backend_reason) {
  const std::optional<train::cuda::AttentionKind> kind = train::cuda::parse_attention(o.attention);
  if (!kind) throw UsageError("--attention " + o.attention + ": expected reference or tensor-core");
  if (*kind == train::cuda::AttentionKind::tensor_core && !use_cuda)
    throw UsageError("--attention tensor-core is a kernel of the CUDA model, and this run uses the CPU model" +
                     (backend_reason.empty() ? std::string() : " (" + backend_reason + ")") + ": pass --backend nccl on a GPU node");
  return *kind;
}

train::cuda::SpeedOptions speed_for(const TrainOptions& o, bool use_cuda, const std::string& backend_reason) {
  const std::string names = train::cuda::speed_names(o.speed);
  if (names != "none" && !use_cuda)
    throw UsageError("--" + names.substr(0, names.find(',')) + " is a switch of the CUDA model, and this run uses the CPU model" +
                     (backend_reason.empty() ? std::string() : " (" + backend_reason + ")") + ": pass --backend nccl on a GPU node");
  return o.speed;
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
    if (value && *value != field) {
      field = *value;
      changed = true;
    }
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

train::TrainSettings build_settings(const TrainOptions& o) {
  train::TrainSettings settings;
  settings.schedule.lr = o.lr;
  settings.schedule.min_lr = o.min_lr >= 0 ? o.min_lr : o.lr / 10;
  settings.schedule.total = o.lr_steps > 0 ? o.lr_steps : o.steps;
  settings.schedule.warmup = o.warmup >= 0 ? o.warmup : std::min(settings.schedule.total / 10, 100);
  settings.adamw.weight_decay = o.weight_decay;
  settings.grad_clip = o.grad_clip;
  settings.zero1 = o.zero1;
  const char* forced = std::getenv("GPUDIRECT_TRAIN_ZERO1_AT_ONE_RANK");  // tests (train_settings.hpp)
  settings.zero1_at_one_rank = forced && std::string_view(forced) == "1";
  settings.bucket_bytes = static_cast<std::size_t>(o.bucket_mib * (1 << 20));
  settings.first_bucket_bytes = static_cast<std::size_t>(o.first_bucket_mib * (1 << 20));
  return settings;
}

}  // namespace gpudirect::launcher::train_command
