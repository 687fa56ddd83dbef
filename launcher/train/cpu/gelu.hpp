// GELU with the tanh approximation (GPT-2; torch.nn.functional.gelu(x, approximate="tanh")):
// y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#pragma once

#include <cstddef>

namespace gpudirect::train::cpu {

void gelu_forward(float* out, const float* inp, std::size_t n, int threads);
// Adds into dinp.
void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n, int threads);

}  // namespace gpudirect::train::cpu
