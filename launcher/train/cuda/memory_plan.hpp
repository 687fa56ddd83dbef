// What a CUDA training run keeps in GPU memory, counted from the shapes before anything is
// allocated: printed before the first step, and a run that cannot fit is refused naming the numbers.
// CudaGpt allocates exactly model_buffer_sizes(), so the plan and the allocation cannot drift apart.
#pragma once

#include "train/cuda/attention_kind.hpp"
#include "train/cuda/speed_options.hpp"
#include "train/gpt_config.hpp"
#include "train/train_settings.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpudirect::train::cuda {

// Element counts of every device buffer of CudaGpt (gpt_cuda.cuh names them with a trailing _).
struct ModelBufferSizes {
  // fp32
  std::size_t params = 0, grads = 0, encoded = 0, res2 = 0, res3 = 0, ln1_mean = 0, ln1_rstd = 0, ln2_mean = 0, ln2_rstd = 0, lse = 0,
              lnf_mean = 0, lnf_rstd = 0, logits = 0, losses = 0, branch = 0, dresidual = 0, dln = 0, attention_scratch = 0,
              layernorm_partials = 0;  // --layernorm-all-sms: layernorm_partials_floats(B x T, C), else 0
  // bf16
  std::size_t weights = 0, ln1 = 0, qkv = 0, atty = 0, ln2 = 0, fch = 0, fch_gelu = 0, lnf = 0, dlogits = 0, dresidual_bf16 = 0, datty = 0,
              dqkv = 0, dfch_gelu = 0, dfch = 0, ones = 0;
  // The tensor-core attention only (0 for the reference, which keeps lse and attention_scratch
  // instead): bf16 probabilities of every layer and the fp32 and bf16 score scratch, B x NH x T x T
  // each; the head-major copies (kernels.cuh: TensorCoreScratch), bf16.
  std::size_t probs = 0, scores = 0, dscores = 0, qkv_heads = 0, dqkv_heads = 0, heads = 0;
  // bytes: cuBLASLt's workspace (--gemm-epilogues)
  std::size_t gemm_workspace_bytes = 0;
  // int32
  std::size_t inputs = 0, targets = 0, group_tokens = 0, group_offsets = 0, group_positions = 0;
};

// speed: the switches of speed_options.hpp that change buffers (--pad-vocab: logits rows).
ModelBufferSizes model_buffer_sizes(const GptConfig& config, AttentionKind attention = AttentionKind::reference,
                                    const SpeedOptions& speed = {});

// Bytes per GPU, by what they hold.
struct MemoryPlan {
  std::uint64_t weights = 0;        // fp32 master parameters and their bf16 copy
  std::uint64_t gradients = 0;      // fp32, the whole model (buckets are views of it)
  std::uint64_t optimizer = 0;      // AdamW moments: this rank's shard under ZeRO-1, else all
  std::uint64_t zero1_staging = 0;  // ZeRO-1's padded bucket buffer (the largest bucket)
  std::uint64_t activations = 0;    // saved for backward, and backward's scratch
  std::uint64_t scores = 0;         // tensor-core attention: B x NH x T x T probabilities per layer, and its score scratch
  std::uint64_t logits = 0;         // fp32 logits (none under --fused-classifier) and bf16 dlogits, B x T x V (padded V: --pad-vocab)
  std::uint64_t other = 0;          // tokens, the gradient-norm partials, the host-value scratch, cuBLASLt's workspace
  std::uint64_t total() const { return weights + gradients + optimizer + zero1_staging + activations + scores + logits + other; }
};

// world: ranks sharing the ZeRO-1 state; settings decide ZeRO-1 and the bucket sizes; attention, the
// attention's buffers.
MemoryPlan plan_memory(const GptConfig& config, const TrainSettings& settings, int world,
                       AttentionKind attention = AttentionKind::reference, const SpeedOptions& speed = {});

// The backend's small buffers: the gradient norm's partial sums (one double per block of its fixed
// grid) and the device scratch that small host values travel through (NCCL moves device memory).
inline constexpr std::size_t kSumOfSquaresPartials = 512;
inline constexpr std::size_t kHostValueScratchBytes = 1 << 16;

// What CUDA, cuBLAS and NCCL take besides the plan (context, handles, NCCL's buffers): left free.
inline constexpr std::uint64_t kRuntimeReserveBytes = 3ull << 30;

// One line per part and the total, in GiB ("memory plan per GPU: weights 9.27 GiB, ...").
std::string describe(const MemoryPlan& plan);

// Empty when the plan plus kRuntimeReserveBytes fits in `available` bytes; otherwise why not, with
// the numbers and what would make it fit.
std::string does_not_fit(const MemoryPlan& plan, std::uint64_t available, const GptConfig& config, bool zero1);

}  // namespace gpudirect::train::cuda
