// Layer normalisation over the last dimension (eps 1e-5, as GPT-2 and torch.nn.LayerNorm).
#pragma once

namespace gpudirect::train::cpu {

// out, inp: [N, C]; mean, rstd: [N] (kept for backward).
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias, int N, int C,
                       int threads);
// Adds into dinp, dweight, dbias.
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight,
                        const float* mean, const float* rstd, int N, int C, int threads);

}  // namespace gpudirect::train::cpu
