// The arithmetic and indexing of the CUDA attention kernels (attention.cu, attention_tensor_core.cu),
// compiled for the device and for the host: the unit tests run the kernels' loops over these on the
// host against the CPU reference (cpu/attention.cpp), so only the split of a row over a warp's lanes
// is left to the GPU check.
#pragma once

#include "train/cuda/host_device.hpp"
#include "train/cuda/launch_geometry.hpp"

#include <cmath>
#include <cstddef>

namespace gpudirect::train::cuda {

// Rows are (b, h, t) in [B, NH, T] order: one warp per row in the kernels; lse and delta use it too.
struct AttentionShape {
  int B = 0, T = 0, C = 0, NH = 0, hs = 0;
  float scale = 0;
  GPUDIRECT_HOST_DEVICE int rows() const { return B * NH * T; }
  GPUDIRECT_HOST_DEVICE int t_of(int row) const { return row % T; }
  GPUDIRECT_HOST_DEVICE int h_of(int row) const { return (row / T) % NH; }
  GPUDIRECT_HOST_DEVICE int b_of(int row) const { return row / (T * NH); }
  // The query of token (b, t), head h, in qkv [B, T, 3C]; its key is C further, its value 2C.
  GPUDIRECT_HOST_DEVICE std::size_t qkv_at(int b, int t, int h) const {
    return (static_cast<std::size_t>(b) * T + t) * 3 * C + static_cast<std::size_t>(h) * hs;
  }
  // Head h of token (b, t) in out [B, T, C].
  GPUDIRECT_HOST_DEVICE std::size_t out_at(int b, int t, int h) const {
    return (static_cast<std::size_t>(b) * T + t) * C + static_cast<std::size_t>(h) * hs;
  }
  // Tensor-core path: element (row, d) of a head-major [B, NH, T, hs] copy is row * hs + d (rows in
  // the order above); it is channel offset + h * hs + d of token (b, t) in a [B, T, width] tensor:
  // q, k, v at offsets 0, C, 2C of qkv (width 3C), out and dout at offset 0 (width C).
  GPUDIRECT_HOST_DEVICE std::size_t token_at(int row, int width, int offset) const {
    return (static_cast<std::size_t>(b_of(row)) * T + t_of(row)) * width + offset + static_cast<std::size_t>(h_of(row)) * hs;
  }
};

inline AttentionShape attention_shape(int B, int T, int C, int NH) {
  const int hs = C / NH;
  require_head_size_fits(hs);
  return AttentionShape{B, T, C, NH, hs, 1.0f / std::sqrt(static_cast<float>(hs))};
}

// Softmax over scores that arrive one at a time: the running max and the sum of exp(s - max).
struct OnlineSoftmax {
  float max = -INFINITY, sum = 0.0f;
  // Takes score s; sets p = exp(s - new max) and returns the factor the accumulated output must be
  // multiplied by (exp(old max - new max); 0 for the first score).
  GPUDIRECT_HOST_DEVICE float add(float s, float& p) {
    const float new_max = fmaxf(max, s);
    const float correction = expf(max - new_max);
    p = expf(s - new_max);
    sum = sum * correction + p;
    max = new_max;
    return correction;
  }
  GPUDIRECT_HOST_DEVICE float log_sum_exp() const { return max + logf(sum); }
};

// Backward recomputes the probabilities from the stored log-sum-exp of the row.
GPUDIRECT_HOST_DEVICE inline float attention_probability(float score, float lse) { return expf(score - lse); }
// dL/dscore = p (dp - delta), with dp = dout_i . v_j and delta = dout_i . out_i (= sum_j p dp).
GPUDIRECT_HOST_DEVICE inline float attention_dscore(float p, float dp, float delta) { return p * (dp - delta); }

// The tensor-core path's fused causal softmax works on raw scores s_j = q_t . k_j (the GEMM does not
// scale): p_j = exp(scale s_j - m) / sum_{j' <= t} exp(scale s_j' - m), m the row's largest scale s_j
// (j <= t), so no exp overflows; p_j = 0 for j > t. This is one term before the division.
GPUDIRECT_HOST_DEVICE inline float causal_softmax_term(float raw, float scale, float row_max) { return expf(raw * scale - row_max); }
// Its backward gives the gradient of the raw score, scale included, so dq and dk need no scaling:
// scale p_j (dp_j - sum_j' p_j' dp_j').
GPUDIRECT_HOST_DEVICE inline float raw_dscore(float p, float dp, float row_dot, float scale) {
  return scale * attention_dscore(p, dp, row_dot);
}

}  // namespace gpudirect::train::cuda
