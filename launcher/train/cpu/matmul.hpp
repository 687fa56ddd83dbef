// Fully connected layer as nn.Linear computes it: out[N, OC] = inp[N, IC] @ weight[OC, IC]^T + bias.
// The matrix products go through cblas_sgemm (OpenBLAS); the transposes are gemm flags, never copies.
#pragma once

namespace gpudirect::train::cpu {

// bias may be null (the tied output head has none).
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int IC, int OC, int threads);
// Adds into dinp (may be null: nothing needs it), dweight and dbias (null when there is no bias).
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight, int N, int IC,
                     int OC, int threads);

}  // namespace gpudirect::train::cpu
