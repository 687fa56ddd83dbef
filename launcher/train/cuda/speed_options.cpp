#include "train/cuda/speed_options.hpp"

namespace gpudirect::train::cuda {

const std::array<SpeedSwitch, 8> kSpeedSwitches = {{
    {&SpeedOptions::pad_vocab, "pad-vocab",
     "CUDA model: pad the logits rows to a multiple of 128 columns (50257 -> 50304 for GPT-2), so every row is 256-byte "
     "aligned or more; the padded columns are never written or read (not yet run on a GPU)"},
    {&SpeedOptions::multi_tensor_adamw, "multi-tensor-adamw",
     "CUDA model: one AdamW launch over every piece of the parameter buffer this rank owns, in place of one per tensor "
     "(not yet run on a GPU)"},
    {&SpeedOptions::vector_loads, "vector-loads",
     "CUDA model: GELU, the residual add and fp32 -> bf16 move 16 bytes per load and store (8 bf16 or 4 fp32) with a "
     "scalar tail, where the buffers are 16-byte aligned (not yet run on a GPU)"},
    {&SpeedOptions::nccl_high_priority, "nccl-high-priority",
     "CUDA model: NCCL's CUDA stream at the GPU's greatest stream priority, so the gradient collectives' kernels are "
     "scheduled ahead of backward's (not yet run on a GPU)"},
    {&SpeedOptions::recompute, "recompute",
     "CUDA model: keep only each block's input and one block's activations, and run each block's forward again in "
     "backward (each block's forward computed twice; the memory plan shows what it saves; not yet run on a GPU)"},
    {&SpeedOptions::layernorm_all_sms, "layernorm-all-sms",
     "CUDA model: layernorm backward's weight and bias gradients over column blocks x row chunks, partial sums in "
     "scratch added in a fixed order by a second pass, no atomics (not yet run on a GPU)"},
    {&SpeedOptions::fused_classifier, "fused-classifier",
     "CUDA model: bf16 logits (no fp32 logits buffer), and the softmax, loss and gradient in place in one kernel per row "
     "(not yet run on a GPU)"},
    {&SpeedOptions::gemm_epilogues, "gemm-epilogues",
     "CUDA model: the biases and the MLP's GELU (forward and backward) in cuBLASLt's GEMM epilogues instead of separate "
     "kernels; needs a width that is a multiple of 8 (not yet run on a GPU)"},
}};

std::string speed_names(const SpeedOptions& speed) {
  std::string names;
  for (const SpeedSwitch& s : kSpeedSwitches) {
    if (!(speed.*s.on)) continue;
    if (!names.empty()) names += ", ";
    names += s.name;
  }
  return names.empty() ? "none" : names;
}

}  // namespace gpudirect::train::cuda
