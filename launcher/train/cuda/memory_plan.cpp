#include "train/cuda/memory_plan.hpp"

#include "train/cuda/layernorm_partials.hpp"
#include "train/cuda/multi_tensor_adamw.hpp"
#include "train/gradient_buckets.hpp"
#include "train/model.hpp"
#include "train/zero1_shards.hpp"

#include <algorithm>
#include <cstdio>

namespace gpudirect::train::cuda {

ModelBufferSizes model_buffer_sizes(const GptConfig& config, AttentionKind attention, const SpeedOptions& speed) {
  // L: the block inputs (res3) of every layer; S: the layers whose block activations are kept at once
  // (every layer, or one under --recompute: speed_options.hpp).
  const std::size_t L = static_cast<std::size_t>(config.layers), S = saved_layers(config.layers, speed);
  const std::size_t C = static_cast<std::size_t>(config.width);
  const std::size_t BT = static_cast<std::size_t>(config.micro_batch) * static_cast<std::size_t>(config.seq_len);
  const std::size_t BTC = BT * C, V = static_cast<std::size_t>(config.vocab);
  const std::size_t rows = BT * static_cast<std::size_t>(config.heads);  // attention rows: B x H x T
  const std::size_t P = ParameterLayout(config).total();
  ModelBufferSizes n;
  n.params = n.grads = n.weights = P;
  n.inputs = n.targets = n.group_tokens = n.group_positions = BT;
  n.group_offsets = BT + 1;
  n.encoded = BTC;
  n.res3 = L * BTC;
  n.res2 = S * BTC;
  n.ln1_mean = n.ln1_rstd = n.ln2_mean = n.ln2_rstd = S * BT;
  n.lnf_mean = n.lnf_rstd = n.losses = BT;
  n.logits = n.dlogits = BT * logits_stride(V, speed);
  if (speed.fused_classifier) n.logits = 0;  // the logits are bf16, in the dlogits buffer
  n.ln1 = n.atty = n.ln2 = S * BTC;
  n.qkv = S * 3 * BTC;
  n.fch = n.fch_gelu = S * 4 * BTC;
  n.lnf = BTC;
  n.branch = n.dresidual = n.dln = BTC;
  if (attention == AttentionKind::tensor_core) {
    const std::size_t scores = rows * static_cast<std::size_t>(config.seq_len);  // B x NH x T x T
    n.probs = S * scores;
    n.scores = n.dscores = scores;
    n.qkv_heads = n.dqkv_heads = 3 * BTC;
    n.heads = BTC;
  } else {
    n.lse = S * rows;
    n.attention_scratch = rows;
  }
  n.dresidual_bf16 = n.datty = BTC;
  n.dqkv = 3 * BTC;
  n.dfch_gelu = n.dfch = 4 * BTC;
  if (speed.gemm_epilogues) {  // the projection's input gradient goes through the GELU's in its epilogue
    n.dfch_gelu = 0;
    n.gemm_workspace_bytes = kGemmEpilogueWorkspaceBytes;
  }
  n.ones = BT;
  if (speed.layernorm_all_sms) n.layernorm_partials = layernorm_partials_floats(BT, C);
  return n;
}

MemoryPlan plan_memory(const GptConfig& config, const TrainSettings& settings, int world, AttentionKind attention,
                       const SpeedOptions& speed) {
  const ModelBufferSizes n = model_buffer_sizes(config, attention, speed);
  constexpr std::uint64_t f32 = 4, bf16 = 2, i32 = 4;
  MemoryPlan plan;
  plan.weights = f32 * n.params + bf16 * n.weights;
  plan.gradients = f32 * n.grads;
  plan.activations = f32 * (n.encoded + n.res2 + n.res3 + n.ln1_mean + n.ln1_rstd + n.ln2_mean + n.ln2_rstd + n.lse + n.lnf_mean +
                            n.lnf_rstd + n.losses + n.branch + n.dresidual + n.dln + n.attention_scratch + n.layernorm_partials) +
                     bf16 * (n.ln1 + n.qkv + n.atty + n.ln2 + n.fch + n.fch_gelu + n.lnf + n.dresidual_bf16 + n.datty + n.dqkv +
                             n.dfch_gelu + n.dfch + n.ones + n.qkv_heads + n.dqkv_heads + n.heads);
  plan.scores = bf16 * (n.probs + n.dscores) + f32 * n.scores;
  plan.logits = f32 * n.logits + bf16 * n.dlogits;
  plan.other = i32 * (n.inputs + n.targets + n.group_tokens + n.group_offsets + n.group_positions) + 8 * (kSumOfSquaresPartials + 1) +
               kHostValueScratchBytes + n.gemm_workspace_bytes;

  // The AdamW moments and ZeRO-1's staging, by the backend's own shard rule.
  const bool zero1 = zero1_in_effect(settings, world);
  const ParameterLayout layout(config);
  std::uint64_t state = n.params;
  std::vector<Segment> owned{{0, layout.total()}};
  if (zero1) {
    const std::vector<Bucket> buckets = plan_buckets(layout.tensors(), settings.first_bucket_bytes, settings.bucket_bytes);
    owned = owned_segments(buckets, world, 0);  // rank 0 owns the most (or as much)
    state = 0;
    for (const Segment& s : owned) state += s.count;
    std::uint64_t largest = 0;  // one padded bucket at a time (cuda_backend.cu)
    for (const Bucket& b : buckets)
      largest = std::max<std::uint64_t>(largest, shard_of(b, world, 0).chunk * static_cast<std::uint64_t>(world));
    plan.zero1_staging = f32 * largest;
  }
  plan.optimizer = 2 * f32 * state;
  // --multi-tensor-adamw: the owned pieces' table on the device (cuda_backend.cu).
  if (speed.multi_tensor_adamw)
    plan.other += sizeof(MultiTensorPiece) * multi_tensor_table(adamw_pieces(layout, owned), 0.0f).pieces.size();
  return plan;
}

namespace {
double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1ull << 30); }
}  // namespace

std::string describe(const MemoryPlan& plan) {
  char line[512];
  std::snprintf(line, sizeof line,
                "memory plan per GPU: weights %.2f GiB (fp32 + bf16), gradients %.2f, AdamW moments %.2f, ZeRO-1 staging %.2f, "
                "activations %.2f, attention scores %.2f, logits %.2f, other %.2f; total %.2f GiB, plus %.0f GiB left for CUDA, cuBLAS and "
                "NCCL",
                gib(plan.weights), gib(plan.gradients), gib(plan.optimizer), gib(plan.zero1_staging), gib(plan.activations),
                gib(plan.scores), gib(plan.logits), gib(plan.other), gib(plan.total()), gib(kRuntimeReserveBytes));
  return line;
}

std::string does_not_fit(const MemoryPlan& plan, std::uint64_t available, const GptConfig& config, bool zero1) {
  if (plan.total() + kRuntimeReserveBytes <= available) return {};
  char line[512];
  std::snprintf(line, sizeof line,
                "the run needs %.2f GiB per GPU (%.2f by the memory plan + %.0f for CUDA, cuBLAS and NCCL) and the GPU has "
                "%.2f GiB free; activations%s and logits take %.2f GiB at micro-batch %d: lower --micro-batch (use --grad-accum "
                "for the same batch)%s",
                gib(plan.total() + kRuntimeReserveBytes), gib(plan.total()), gib(kRuntimeReserveBytes), gib(available),
                plan.scores > 0 ? ", attention scores" : "", gib(plan.activations + plan.scores + plan.logits), config.micro_batch,
                zero1 ? "" : ", or shard the AdamW state with --zero1");
  return line;
}

}  // namespace gpudirect::train::cuda
