#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/layernorm_partials.hpp"
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

// --layernorm-all-sms, first pass (layernorm_partials.hpp): block (x, k) of 32 x 32 threads sums column
// x * 32 + tx over chunk k's rows, thread row ty taking rows ty, ty + 32, ... of the chunk; the 32
// thread rows are added in order and the block writes partials[k * C + c] (dweight) and
// partials[(row_chunks + k) * C + c] (dbias).
__global__ void layernorm_partials_kernel(float* partials, LayernormPartition p, const float* dout, const float* inp, const float* mean,
                                          const float* rstd, int N, int C) {
  __shared__ float dw_part[kWarpSize][kColumnsPerBlock + 1], db_part[kWarpSize][kColumnsPerBlock + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int c = blockIdx.x * kColumnsPerBlock + tx;
  const std::size_t chunk = blockIdx.y;
  float dw = 0.0f, db = 0.0f;
  if (c < C) {
    for_each_chunk_row(p, static_cast<std::size_t>(N), chunk, ty, [&](std::size_t n) {
      const std::size_t at = n * static_cast<std::size_t>(C) + static_cast<std::size_t>(c);
      dw += layernorm_dweight_term(dout[at], inp[at], mean[n], rstd[n]);
      db += dout[at];
    });
  }
  dw_part[ty][tx] = dw;
  db_part[ty][tx] = db;
  __syncthreads();
  if (ty == 0 && c < C) {
    const std::size_t Cs = static_cast<std::size_t>(C);
    partials[chunk * Cs + c] = fixed_order_sum(kWarpSize, [&](std::size_t y) { return dw_part[y][tx]; });
    partials[(p.row_chunks + chunk) * Cs + c] = fixed_order_sum(kWarpSize, [&](std::size_t y) { return db_part[y][tx]; });
  }
}

// Second pass: one thread per column adds its row_chunks partials in chunk order.
__global__ void layernorm_partials_reduce_kernel(float* dweight, float* dbias, const float* partials, LayernormPartition p, int C) {
  const std::size_t Cs = static_cast<std::size_t>(C);
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < Cs;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dweight[c] += fixed_order_sum(p.row_chunks, [&](std::size_t k) { return partials[k * Cs + c]; });
    dbias[c] += fixed_order_sum(p.row_chunks, [&](std::size_t k) { return partials[(p.row_chunks + k) * Cs + c]; });
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
                        const float* mean, const float* rstd, int N, int C, cudaStream_t stream, float* partials) {
  layernorm_backward_input_kernel<<<warp_per_row_blocks(static_cast<std::size_t>(N)), kThreadsPerBlock, 0, stream>>>(
      dinp, dout, inp, weight, mean, rstd, N, C);
  GPUDIRECT_LAUNCHED();
  if (partials != nullptr) {  // --layernorm-all-sms
    const LayernormPartition p = layernorm_partition(static_cast<std::size_t>(N), static_cast<std::size_t>(C));
    layernorm_partials_kernel<<<dim3(static_cast<unsigned>(p.column_blocks), static_cast<unsigned>(p.row_chunks)),
                                dim3(kColumnsPerBlock, kWarpSize), 0, stream>>>(partials, p, dout, inp, mean, rstd, N, C);
    GPUDIRECT_LAUNCHED();
    layernorm_partials_reduce_kernel<<<grid_stride_blocks(static_cast<std::size_t>(C)), kThreadsPerBlock, 0, stream>>>(dweight, dbias,
                                                                                                                       partials, p, C);
    GPUDIRECT_LAUNCHED();
    return;
  }
  layernorm_backward_params_kernel<<<column_blocks(static_cast<std::size_t>(C)), dim3(kColumnsPerBlock, kWarpSize), 0, stream>>>(
      dweight, dbias, dout, inp, mean, rstd, N, C);
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
