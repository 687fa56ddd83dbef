// Which attention the CUDA model runs (`train --attention`): the warp-per-row kernels of attention.cu,
// kept as the reference the GPU check compares against, or cuBLAS's tensor cores
// (attention_tensor_core.cu). Plain C++, so the train command can parse the option in any build.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpudirect::train::cuda {

enum class AttentionKind {
  reference,    // warp per row, online softmax, nothing of size T x T stored (attention.cu)
  tensor_core,  // batched bf16 GEMMs and a fused causal softmax, B x NH x T x T probabilities stored
};

// "reference" or "tensor-core", as the command line spells them.
std::string attention_name(AttentionKind kind);
// The kind a name spells, or nothing for a name that is neither.
std::optional<AttentionKind> parse_attention(std::string_view name);

}  // namespace gpudirect::train::cuda
