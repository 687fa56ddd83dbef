// Token + position embedding: out[b,t,:] = wte[token[b,t],:] + wpe[t,:].
#pragma once

#include <cstdint>

namespace gpudirect::train::cpu {

void encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C, int threads);
// Adds into dwte and dwpe. Each thread owns a slice of the channels, so rows of wte that several
// positions share are summed without races and in a fixed order (deterministic).
void encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens, int B, int T, int C, int threads);

}  // namespace gpudirect::train::cpu
