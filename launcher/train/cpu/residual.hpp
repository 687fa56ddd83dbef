// Residual connection: out = a + b. Its backward is the identity into both inputs, so the model
// keeps one gradient buffer for the residual stream and lets each branch add into it; the
// function below is that "add into" step for callers that keep separate buffers.
#pragma once

#include <cstddef>

namespace gpudirect::train::cpu {

void residual_forward(float* out, const float* a, const float* b, std::size_t n, int threads);
// Adds dout into da and db.
void residual_backward(float* da, float* db, const float* dout, std::size_t n, int threads);

}  // namespace gpudirect::train::cpu
