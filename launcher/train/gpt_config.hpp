// The shape of a GPT model and of one training step: named presets plus per-field overrides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpudirect::train {

struct GptConfig {
  std::string preset;   // name it came from ("tiny", "gpt2-124m", "gpt3-5b", or "custom")
  int layers = 0;       // L
  int heads = 0;        // H
  int width = 0;        // C (model dimension; the MLP is 4C wide)
  int seq_len = 0;      // T (also the size of the position table)
  int vocab = 0;        // V
  int micro_batch = 0;  // B, sequences per rank per forward/backward
  int grad_accum = 1;   // micro-batches per optimizer step
  std::uint64_t seed = 1337;
};

// tiny: L2 H4 C64 T64 V512 B4 (unit tests); gpt2-124m: L12 H12 C768 T1024 V50257 B8;
// gpt3-5b (NeMo's 5B shape): L24 H32 C4096 T2048 V50257 B4. Throws std::invalid_argument naming
// the known presets for an unknown name.
GptConfig preset_config(std::string_view name);
std::vector<std::string> preset_names();

// Throws std::invalid_argument with a message naming the field for a shape that cannot work
// (non-positive fields, width not divisible by heads, ...).
void validate(const GptConfig& config);

std::size_t parameter_count(const GptConfig& config);
// Model FLOPs per token for forward + backward, as llm.c and PaLM count them: 6N + 6*L*C*T.
double flops_per_token(const GptConfig& config);

}  // namespace gpudirect::train
