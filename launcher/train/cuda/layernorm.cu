#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/reductions.cuh"

namespace gpudirect::train::cuda {
namespace {

__global__ void layernorm_forward_kernel(bf16* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                                         int N, int C) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= N) return;
  const float* x = inp + static_cast<std::size_t>(row) * C;
  bf16* y = out + static_cast<std::size_t>(row) * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += kWarpSize) sum += x[c];
  const float m = warp_sum(sum) / static_cast<float>(C);
  float var = 0.0f;
  for (int c = lane; c < C; c += kWarpSize) var += (x[c] - m) * (x[c] - m);
  const float s = 1.0f / sqrtf(warp_sum(var) / static_cast<float>(C) + 1e-5f);
  for (int c = lane; c < C; c += kWarpSize) y[c] = __float2bfloat16_rn((x[c] - m) * s * weight[c] + bias[c]);
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

// dx += rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dout * weight; one warp per row.
__global__ void layernorm_backward_input_kernel(float* dinp, const float* dout, const float* inp, const float* weight, const float* mean,
                                                const float* rstd, int N, int C) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= N) return;
  const std::size_t at = static_cast<std::size_t>(row) * C;
  const float m = mean[row], s = rstd[row];
  float g_sum = 0.0f, gx_sum = 0.0f;
  for (int c = lane; c < C; c += kWarpSize) {
    const float g = dout[at + c] * weight[c];
    g_sum += g;
    gx_sum += g * (inp[at + c] - m) * s;
  }
  const float g_mean = warp_sum(g_sum) / static_cast<float>(C), gx_mean = warp_sum(gx_sum) / static_cast<float>(C);
  for (int c = lane; c < C; c += kWarpSize) {
    const float xhat = (inp[at + c] - m) * s;
    dinp[at + c] += s * (dout[at + c] * weight[c] - g_mean - xhat * gx_mean);
  }
}

// 32 x 32 threads per block, kColumnsPerBlock columns: thread (x, y) sums rows y, y+32, ... of column
// x (coalesced across x), then the 32 partial sums of a column are added in y order.
__global__ void layernorm_backward_params_kernel(float* dweight, float* dbias, const float* dout, const float* inp, const float* mean,
                                                 const float* rstd, int N, int C) {
  __shared__ float dw_part[kWarpSize][kColumnsPerBlock + 1], db_part[kWarpSize][kColumnsPerBlock + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int c = blockIdx.x * kColumnsPerBlock + tx;
  float dw = 0.0f, db = 0.0f;
  if (c < C) {
    for (int n = ty; n < N; n += kWarpSize) {
      const std::size_t at = static_cast<std::size_t>(n) * C + c;
      const float d = dout[at];
      dw += d * (inp[at] - mean[n]) * rstd[n];
      db += d;
    }
  }
  dw_part[ty][tx] = dw;
  db_part[ty][tx] = db;
  __syncthreads();
  if (ty == 0 && c < C) {
    float w = 0.0f, b = 0.0f;
    for (int y = 0; y < kWarpSize; ++y) {
      w += dw_part[y][tx];
      b += db_part[y][tx];
    }
    dweight[c] += w;
    dbias[c] += b;
  }
}

}  // namespace

void layernorm_forward(bf16* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias, int N, int C,
                       cudaStream_t stream) {
  layernorm_forward_kernel<<<warp_per_row_blocks(static_cast<std::size_t>(N)), kThreadsPerBlock, 0, stream>>>(out, mean, rstd, inp, weight,
                                                                                                              bias, N, C);
  GPUDIRECT_LAUNCHED();
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight,
                        const float* mean, const float* rstd, int N, int C, cudaStream_t stream) {
  layernorm_backward_input_kernel<<<warp_per_row_blocks(static_cast<std::size_t>(N)), kThreadsPerBlock, 0, stream>>>(
      dinp, dout, inp, weight, mean, rstd, N, C);
  GPUDIRECT_LAUNCHED();
  layernorm_backward_params_kernel<<<column_blocks(static_cast<std::size_t>(C)), dim3(kColumnsPerBlock, kWarpSize), 0, stream>>>(
      dweight, dbias, dout, inp, mean, rstd, N, C);
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
