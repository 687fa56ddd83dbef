// Causal attention, written for being plainly right rather than fast: one warp per query (forward,
// dq) or key (dk, dv) row, each lane holding channels lane, lane+32, ... of the head; the scores are
// warp sums. Forward keeps the running max and sum (online softmax) and stores only the log-sum-exp,
// so nothing of size T x T is stored; backward recomputes p = exp(s - lse) with
// D_i = sum_d dout_i * out_i, and ds = p (dout_i . v_j - D_i). dq and (dk, dv) come from two kernels
// so that every output element is written by one warp, in a fixed order: no atomics.
#include "train/cuda/cuda_check.cuh"
#include "train/cuda/attention_math.hpp"
#include "train/cuda/kernels.cuh"
#include "train/cuda/reductions.cuh"

namespace gpudirect::train::cuda {
namespace {

using Heads = AttentionShape;

template <int kPerLane>
__device__ inline void load(float (&dst)[kPerLane], const bf16* src, int hs, int lane) {
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + i * kWarpSize;
    dst[i] = d < hs ? __bfloat162float(src[d]) : 0.0f;
  }
}

template <int kPerLane>
__device__ inline float dot(const float (&a)[kPerLane], const bf16* b, int hs, int lane) {
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + i * kWarpSize;
    if (d < hs) sum += a[i] * __bfloat162float(b[d]);
  }
  return warp_sum(sum);
}

template <int kPerLane>
__device__ inline void store(bf16* dst, const float (&src)[kPerLane], float factor, int hs, int lane) {
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + i * kWarpSize;
    if (d < hs) dst[d] = __float2bfloat16_rn(src[i] * factor);
  }
}

template <int kPerLane>
__global__ void attention_forward_kernel(bf16* out, float* lse, const bf16* qkv, Heads g) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= g.rows()) return;
  const int t = g.t_of(row), h = g.h_of(row), b = g.b_of(row);
  float q[kPerLane], acc[kPerLane], v[kPerLane];
  load(q, qkv + g.qkv_at(b, t, h), g.hs, lane);
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) acc[i] = 0.0f;
  OnlineSoftmax softmax;
  for (int j = 0; j <= t; ++j) {
    const std::size_t key = g.qkv_at(b, j, h);
    float p = 0.0f;
    const float correction = softmax.add(dot(q, qkv + key + g.C, g.hs, lane) * g.scale, p);
    load(v, qkv + key + 2 * g.C, g.hs, lane);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] = acc[i] * correction + p * v[i];
  }
  store(out + g.out_at(b, t, h), acc, 1.0f / softmax.sum, g.hs, lane);
  if (lane == 0) lse[row] = softmax.log_sum_exp();
}

// D[row] = dout_row . out_row
template <int kPerLane>
__global__ void attention_delta_kernel(float* delta, const bf16* dout, const bf16* out, Heads g) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= g.rows()) return;
  const int t = g.t_of(row), h = g.h_of(row), b = g.b_of(row);
  float d[kPerLane];
  load(d, dout + g.out_at(b, t, h), g.hs, lane);
  const float value = dot(d, out + g.out_at(b, t, h), g.hs, lane);
  if (lane == 0) delta[row] = value;
}

// dq_i = scale * sum_{j <= i} ds_ij k_j
template <int kPerLane>
__global__ void attention_dq_kernel(bf16* dqkv, const float* delta, const bf16* dout, const bf16* qkv, const float* lse, Heads g) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= g.rows()) return;
  const int t = g.t_of(row), h = g.h_of(row), b = g.b_of(row);
  float q[kPerLane], d[kPerLane], k[kPerLane], acc[kPerLane];
  load(q, qkv + g.qkv_at(b, t, h), g.hs, lane);
  load(d, dout + g.out_at(b, t, h), g.hs, lane);
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) acc[i] = 0.0f;
  const float row_lse = lse[row], row_delta = delta[row];
  for (int j = 0; j <= t; ++j) {
    const std::size_t key = g.qkv_at(b, j, h);
    const float p = attention_probability(dot(q, qkv + key + g.C, g.hs, lane) * g.scale, row_lse);
    const float ds = attention_dscore(p, dot(d, qkv + key + 2 * g.C, g.hs, lane), row_delta);
    load(k, qkv + key + g.C, g.hs, lane);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] += ds * k[i];
  }
  store(dqkv + g.qkv_at(b, t, h), acc, g.scale, g.hs, lane);
}

// dk_j = scale * sum_{i >= j} ds_ij q_i ; dv_j = sum_{i >= j} p_ij dout_i
template <int kPerLane>
__global__ void attention_dkv_kernel(bf16* dqkv, const float* delta, const bf16* dout, const bf16* qkv, const float* lse, Heads g) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= g.rows()) return;
  const int j = g.t_of(row), h = g.h_of(row), b = g.b_of(row);
  const int head_rows = row - j;  // row of (b, h, 0)
  float k[kPerLane], v[kPerLane], q[kPerLane], d[kPerLane], dk[kPerLane], dv[kPerLane];
  const std::size_t key = g.qkv_at(b, j, h);
  load(k, qkv + key + g.C, g.hs, lane);
  load(v, qkv + key + 2 * g.C, g.hs, lane);
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) dk[i] = dv[i] = 0.0f;
  for (int t = j; t < g.T; ++t) {
    const bf16* q_row = qkv + g.qkv_at(b, t, h);
    const bf16* d_row = dout + g.out_at(b, t, h);
    const float p = attention_probability(dot(k, q_row, g.hs, lane) * g.scale, lse[head_rows + t]);
    const float ds = attention_dscore(p, dot(v, d_row, g.hs, lane), delta[head_rows + t]);
    load(q, q_row, g.hs, lane);
    load(d, d_row, g.hs, lane);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      dk[i] += ds * q[i];
      dv[i] += p * d[i];
    }
  }
  store(dqkv + key + g.C, dk, g.scale, g.hs, lane);
  store(dqkv + key + 2 * g.C, dv, 1.0f, g.hs, lane);
}

// Calls f.template operator()<kPerLane>() with the smallest of 1, 2, 4, 8 channels per lane that holds a head.
template <typename F>
void with_channels_per_lane(int hs, F&& f) {
  const int need = channels_per_lane(hs);
  if (need <= 1)
    f.template operator()<1>();
  else if (need <= 2)
    f.template operator()<2>();
  else if (need <= 4)
    f.template operator()<4>();
  else
    f.template operator()<kMaxChannelsPerLane>();
}

}  // namespace

void attention_forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int C, int NH, cudaStream_t stream) {
  const Heads g = attention_shape(B, T, C, NH);
  const unsigned blocks = warp_per_row_blocks(static_cast<std::size_t>(B) * NH * T);
  with_channels_per_lane(
      g.hs, [&]<int kPerLane>() { attention_forward_kernel<kPerLane><<<blocks, kThreadsPerBlock, 0, stream>>>(out, lse, qkv, g); });
  GPUDIRECT_LAUNCHED();
}

void attention_backward(bf16* dqkv, float* scratch, const bf16* dout, const bf16* qkv, const bf16* out, const float* lse, int B, int T,
                        int C, int NH, cudaStream_t stream) {
  const Heads g = attention_shape(B, T, C, NH);
  const unsigned blocks = warp_per_row_blocks(static_cast<std::size_t>(B) * NH * T);
  with_channels_per_lane(g.hs, [&]<int kPerLane>() {
    attention_delta_kernel<kPerLane><<<blocks, kThreadsPerBlock, 0, stream>>>(scratch, dout, out, g);
    attention_dq_kernel<kPerLane><<<blocks, kThreadsPerBlock, 0, stream>>>(dqkv, scratch, dout, qkv, lse, g);
    attention_dkv_kernel<kPerLane><<<blocks, kThreadsPerBlock, 0, stream>>>(dqkv, scratch, dout, qkv, lse, g);
  });
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
