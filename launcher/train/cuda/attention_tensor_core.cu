// Causal attention on tensor cores, as llm.c does it without cuDNN: q, k and v are copied head-major
// ([B, NH, T, hs]), the scores q k^T and the output p v are cuBLAS strided-batched bf16 GEMMs with
// fp32 accumulation over the B x NH heads (attention_plan.hpp), and a fused kernel turns each row of
// raw scores into causal softmax probabilities. The B x NH x T x T probabilities are kept per layer
// for backward, which runs the mirror image: dp = dout v^T, dv = p^T dout, the softmax backward fused
// into one kernel, dq = ds k, dk = ds^T q. The GEMMs compute whole T x T blocks; the softmax writes
// zeros above the diagonal, so the masked half adds nothing. No atomics: every output element has
// one writer, the warp sums have a fixed order.
#include "train/cuda/attention_math.hpp"
#include "train/cuda/attention_plan.hpp"
#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/reductions.cuh"

namespace gpudirect::train::cuda {
namespace {

using Heads = AttentionShape;

// gridDim.y parts (q, k, v or just out): part p is the head-major copy of channels [p C, (p+1) C)
// of the token-major tensor, which has gridDim.y * C channels per token.
__global__ void to_heads_kernel(bf16* heads, const bf16* tokens, Heads g) {
  const int part = blockIdx.y, width = gridDim.y * g.C;
  const std::size_t n = static_cast<std::size_t>(g.rows()) * g.hs;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(i / g.hs), d = static_cast<int>(i % g.hs);
    heads[part * n + i] = tokens[g.token_at(row, width, part * g.C) + d];
  }
}

__global__ void from_heads_kernel(bf16* tokens, const bf16* heads, Heads g) {
  const int part = blockIdx.y, width = gridDim.y * g.C;
  const std::size_t n = static_cast<std::size_t>(g.rows()) * g.hs;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(i / g.hs), d = static_cast<int>(i % g.hs);
    tokens[g.token_at(row, width, part * g.C) + d] = heads[part * n + i];
  }
}

// One warp per row (b, h, t) of the raw fp32 scores: the row's max over keys j <= t, the sum of the
// terms, then every probability of the row (zeros above the diagonal, so p v ignores those keys).
__global__ void causal_softmax_kernel(bf16* probs, const float* scores, Heads g) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= g.rows()) return;
  const int t = g.t_of(row);
  const float* s = scores + static_cast<std::size_t>(row) * g.T;
  bf16* p = probs + static_cast<std::size_t>(row) * g.T;
  float max = -INFINITY;
  for (int j = lane; j <= t; j += kWarpSize) max = fmaxf(max, s[j] * g.scale);
  max = warp_max(max);
  float sum = 0.0f;
  for (int j = lane; j <= t; j += kWarpSize) sum += causal_softmax_term(s[j], g.scale, max);
  const float inverse = 1.0f / warp_sum(sum);
  for (int j = lane; j < g.T; j += kWarpSize) p[j] = __float2bfloat16_rn(j <= t ? causal_softmax_term(s[j], g.scale, max) * inverse : 0.0f);
}

// One warp per row: the gradient of the raw scores from the probabilities and their fp32 gradient,
// zeros above the diagonal (dq and dk then take only the causal keys).
__global__ void causal_softmax_backward_kernel(bf16* dscores, const float* dprobs, const bf16* probs, Heads g) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (row >= g.rows()) return;
  const int t = g.t_of(row);
  const std::size_t at = static_cast<std::size_t>(row) * g.T;
  float dot = 0.0f;
  for (int j = lane; j <= t; j += kWarpSize) dot += __bfloat162float(probs[at + j]) * dprobs[at + j];
  dot = warp_sum(dot);
  for (int j = lane; j < g.T; j += kWarpSize)
    dscores[at + j] = __float2bfloat16_rn(j <= t ? raw_dscore(__bfloat162float(probs[at + j]), dprobs[at + j], dot, g.scale) : 0.0f);
}

dim3 reorder_grid(int parts, const Heads& g) { return dim3(grid_stride_blocks(static_cast<std::size_t>(g.rows()) * g.hs), parts); }

void to_heads(bf16* heads, const bf16* tokens, int parts, const Heads& g, cudaStream_t stream) {
  to_heads_kernel<<<reorder_grid(parts, g), kThreadsPerBlock, 0, stream>>>(heads, tokens, g);
  GPUDIRECT_LAUNCHED();
}

void from_heads(bf16* tokens, const bf16* heads, int parts, const Heads& g, cudaStream_t stream) {
  from_heads_kernel<<<reorder_grid(parts, g), kThreadsPerBlock, 0, stream>>>(tokens, heads, g);
  GPUDIRECT_LAUNCHED();
}

using DeviceOperands = AttentionOperands<bf16>;

void run(cublasHandle_t handle, const BatchedGemmPlan& p, const DeviceOperands& operands, void* c, cudaDataType_t c_type) {
  const float alpha = 1.0f, beta = 0.0f;
  GPUDIRECT_CUBLAS(cublas().gemm_strided_batched_ex(handle, p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                    p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, p.m, p.n, p.k, &alpha, operands[p.a],
                                                    CUDA_R_16BF, p.lda, p.stride_a, operands[p.b], CUDA_R_16BF, p.ldb, p.stride_b, &beta, c,
                                                    c_type, p.ldc, p.stride_c, p.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// q, k, v of the head-major copy (3 x B*NH*T*hs elements).
DeviceOperands qkv_operands(const bf16* qkv_heads, const Heads& g) {
  const std::size_t n = static_cast<std::size_t>(g.rows()) * g.hs;
  DeviceOperands operands;
  operands.query = qkv_heads;
  operands.key = qkv_heads + n;
  operands.value = qkv_heads + 2 * n;
  return operands;
}

}  // namespace

void attention_forward_tensor_core(cublasHandle_t handle, bf16* out, bf16* probs, const bf16* qkv, const TensorCoreScratch& scratch, int B,
                                   int T, int C, int NH, cudaStream_t stream) {
  GPUDIRECT_CUBLAS(cublas().set_stream(handle, stream));
  const Heads g = attention_shape(B, T, C, NH);
  const AttentionStrides s = attention_strides(B, T, C, NH);
  const unsigned softmax_blocks = warp_per_row_blocks(static_cast<std::size_t>(g.rows()));
  to_heads(scratch.qkv_heads, qkv, 3, g, stream);
  DeviceOperands operands = qkv_operands(scratch.qkv_heads, g);
  run(handle, scores_plan(s), operands, scratch.scores, CUDA_R_32F);
  causal_softmax_kernel<<<softmax_blocks, kThreadsPerBlock, 0, stream>>>(probs, scratch.scores, g);
  GPUDIRECT_LAUNCHED();
  operands.probs = probs;
  run(handle, values_plan(s), operands, scratch.heads, CUDA_R_16BF);
  from_heads(out, scratch.heads, 1, g, stream);
}

void attention_backward_tensor_core(cublasHandle_t handle, bf16* dqkv, const bf16* dout, const bf16* qkv, const bf16* probs,
                                    const TensorCoreScratch& scratch, int B, int T, int C, int NH, cudaStream_t stream) {
  GPUDIRECT_CUBLAS(cublas().set_stream(handle, stream));
  const Heads g = attention_shape(B, T, C, NH);
  const AttentionStrides s = attention_strides(B, T, C, NH);
  const std::size_t n = static_cast<std::size_t>(g.rows()) * g.hs;
  const unsigned softmax_blocks = warp_per_row_blocks(static_cast<std::size_t>(g.rows()));
  // The head-major q, k, v are made again rather than kept per layer: a copy costs far less than
  // L x 3 x B*T*C more bf16 of memory.
  to_heads(scratch.qkv_heads, qkv, 3, g, stream);
  to_heads(scratch.heads, dout, 1, g, stream);
  DeviceOperands operands = qkv_operands(scratch.qkv_heads, g);
  operands.probs = probs;
  operands.dout = scratch.heads;
  run(handle, dprobs_plan(s), operands, scratch.scores, CUDA_R_32F);  // the forward's scores are not needed again
  run(handle, dvalues_plan(s), operands, scratch.dqkv_heads + 2 * n, CUDA_R_16BF);
  causal_softmax_backward_kernel<<<softmax_blocks, kThreadsPerBlock, 0, stream>>>(scratch.dscores, scratch.scores, probs, g);
  GPUDIRECT_LAUNCHED();
  operands.dscores = scratch.dscores;
  run(handle, dquery_plan(s), operands, scratch.dqkv_heads, CUDA_R_16BF);
  run(handle, dkey_plan(s), operands, scratch.dqkv_heads + n, CUDA_R_16BF);
  from_heads(dqkv, scratch.dqkv_heads, 3, g, stream);
}

}  // namespace gpudirect::train::cuda
