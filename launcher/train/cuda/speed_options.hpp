// The CUDA model's optional fast paths (issue 34 item 3), each a switch of `train` (train_options.hpp)
// that swaps in another kernel or layout; with every switch off the model runs today's kernels, which
// stay the reference the GPU check compares against. Plain C++, so the train command, the memory plan
// and the host tests see them in any build. NONE OF THESE HAS RUN ON A GPU YET.
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace gpudirect::train::cuda {

struct SpeedOptions {
  // --pad-vocab: the logits and dlogits rows are logits_stride(V) wide (a multiple of kVocabPadding),
  // so fp32 rows start 512-byte and bf16 rows 256-byte aligned; the padded columns are never written
  // by the head's GEMM nor read by the classifier or backward's GEMMs.
  bool pad_vocab = false;
  // --multi-tensor-adamw: one AdamW launch over every owned piece of the parameter buffer
  // (multi_tensor_adamw.hpp) in place of one per tensor.
  bool multi_tensor_adamw = false;
  // --vector-loads: GELU, the residual add and fp32 -> bf16 move 16 bytes per load and store, with a
  // scalar tail (vector_loads.hpp).
  bool vector_loads = false;
  // --nccl-high-priority: the NCCL communicator's CUDA stream at the device's greatest priority
  // (comm/stream_priority.hpp), so its kernels are scheduled ahead of backward's.
  bool nccl_high_priority = false;
  // --recompute: keep each block's input (the residual stream between blocks) and one block's
  // activations; backward runs each block's forward again before its backward (gpt_cuda.cu), so the
  // activations of L blocks take the memory of one (memory_plan.hpp).
  bool recompute = false;
  // --layernorm-all-sms: layernorm backward's dweight and dbias over column blocks x row chunks with
  // per-block partial sums in scratch and a fixed-order second pass (layernorm_partials.hpp).
  bool layernorm_all_sms = false;
  // --fused-classifier: the head's GEMM writes bf16 logits into the dlogits buffer (no fp32 logits
  // buffer) and one kernel per row computes the loss and overwrites the logits with their gradients
  // (fused_classifier.hpp).
  bool fused_classifier = false;
  // --gemm-epilogues: the biases and the MLP's GELU forward and backward in cuBLASLt's GEMM epilogues
  // (epilogue_plan.hpp): no bias broadcast, GELU or GELU-backward kernels, no dfch_gelu buffer; a
  // cuBLASLt workspace (kGemmEpilogueWorkspaceBytes) instead.
  bool gemm_epilogues = false;
};

// cuBLASLt's workspace under --gemm-epilogues: what NVIDIA's cuBLAS documentation recommends for Hopper.
inline constexpr std::size_t kGemmEpilogueWorkspaceBytes = 32u << 20;

// Layers whose block activations are kept at once: every layer, or one under --recompute.
constexpr std::size_t saved_layers(int layers, const SpeedOptions& speed) { return speed.recompute ? 1 : static_cast<std::size_t>(layers); }
// The slot of layer l's block activations in those buffers.
constexpr std::size_t activation_slot(int layer, const SpeedOptions& speed) {
  return speed.recompute ? 0 : static_cast<std::size_t>(layer);
}

inline constexpr std::size_t kVocabPadding = 128;

// The row stride of the logits and dlogits: V, or V rounded up to a multiple of kVocabPadding.
constexpr std::size_t logits_stride(std::size_t vocab, const SpeedOptions& speed) {
  return speed.pad_vocab ? (vocab + kVocabPadding - 1) / kVocabPadding * kVocabPadding : vocab;
}

// Each switch once: its member, its name on the command line (without "--") and its --help text. The
// train command registers its flags from this table and speed_names reads it, so a switch added here
// is a flag, is named in the run's header and in refusals, with nothing else to keep in step.
struct SpeedSwitch {
  using Member = bool SpeedOptions::*;  // an alias: nvcc's front end turns the plain declarator into one GCC warns of
  Member on;
  const char* name;
  const char* help;
};
extern const std::array<SpeedSwitch, 8> kSpeedSwitches;

// The switches that are on, as the command line spells them ("pad-vocab, ..."), or "none".
std::string speed_names(const SpeedOptions& speed);

}  // namespace gpudirect::train::cuda
