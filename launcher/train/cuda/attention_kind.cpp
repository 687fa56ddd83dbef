#include "train/cuda/attention_kind.hpp"

namespace gpudirect::train::cuda {

std::string attention_name(AttentionKind kind) { return kind == AttentionKind::tensor_core ? "tensor-core" : "reference"; }

std::optional<AttentionKind> parse_attention(std::string_view name) {
  if (name == "reference") return AttentionKind::reference;
  if (name == "tensor-core") return AttentionKind::tensor_core;
  return std::nullopt;
}

}  // namespace gpudirect::train::cuda
