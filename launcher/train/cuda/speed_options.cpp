#include "train/cuda/speed_options.hpp"

namespace gpudirect::train::cuda {

std::string speed_names(const SpeedOptions& speed) {
  std::string names;
  const auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!names.empty()) names += ", ";
    names += name;
  };
  add(speed.pad_vocab, "pad-vocab");
  add(speed.multi_tensor_adamw, "multi-tensor-adamw");
  add(speed.vector_loads, "vector-loads");
  add(speed.nccl_high_priority, "nccl-high-priority");
  add(speed.recompute, "recompute");
  add(speed.layernorm_all_sms, "layernorm-all-sms");
  add(speed.fused_classifier, "fused-classifier");
  add(speed.gemm_epilogues, "gemm-epilogues");
  return names.empty() ? "none" : names;
}

}  // namespace gpudirect::train::cuda
