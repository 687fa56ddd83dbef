// The CUDA model's layers, each the counterpart of a file in ../cpu/ (same math, same argument
// order where it can be). Activations the matrix products read are bf16; the residual stream,
// layer-norm statistics, logits, losses, gradients of parameters and the optimizer state are fp32.
// Every function enqueues on `stream` and returns at once.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "train/cuda/memory_plan.hpp"
#include "train/cuda/multi_tensor_adamw.hpp"
#include "train/optimizer.hpp"

namespace gpudirect::train::cuda {

using bf16 = __nv_bfloat16;

// encoder.cu: out[bt] = wte[token] + wpe[t]. Backward is deterministic (no atomics): positions are
// grouped by token on the host (token_groups.hpp); one block sums each token's rows in order.
void encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C, cudaStream_t stream);
void encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* group_tokens, const std::int32_t* group_offsets,
                      const std::int32_t* group_positions, int groups, int B, int T, int C, cudaStream_t stream);

// layernorm.cu: out = (x - mean) * rstd * w + b, one warp per row; backward adds into dinp, dweight, dbias.
// partials non-null (--layernorm-all-sms, layernorm_partials.hpp): dweight and dbias over column
// blocks x row chunks into that scratch (layernorm_partials_floats(N, C)), then a fixed-order second
// pass; null: one block per 32 columns (the reference).
void layernorm_forward(bf16* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias, int N, int C,
                       cudaStream_t stream);
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight,
                        const float* mean, const float* rstd, int N, int C, cudaStream_t stream, float* partials = nullptr);

// matmul.cu (cuBLAS, fp32 accumulation): out[N, OC] = inp[N, IC] weight[OC, IC]^T + bias, out fp32
// or bf16 (out_type). Backward: dinp[N, IC] = dout weight (overwritten, dinp_type), dweight += dout^T
// inp and dbias += column sums of dout (fp32, accumulated); `ones` holds N bf16 ones. stride: the row
// stride of out and dout when their rows are padded (gemm_plan.hpp; 0 is OC; no bias then).
void matmul_forward(cublasHandle_t handle, void* out, cudaDataType_t out_type, const bf16* inp, const bf16* weight, const float* bias,
                    int N, int IC, int OC, cudaStream_t stream, int stride = 0);
void matmul_backward(cublasHandle_t handle, void* dinp, cudaDataType_t dinp_type, float* dweight, float* dbias, const bf16* dout,
                     const bf16* inp, const bf16* weight, const bf16* ones, int N, int IC, int OC, cudaStream_t stream, int stride = 0);

// matmul_epilogue.cu (--gemm-epilogues, epilogue_plan.hpp): the products whose bias and GELU run in
// cuBLASLt's epilogue. out = inp weight^T + bias; out = gelu(pre) with pre = inp weight^T + bias
// written for backward; dinp[N, IC] = (dout weight) * gelu'(pre), pre[N, IC] being the GELU's input.
struct GemmEpilogueContext {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};
void matmul_forward_bias(const GemmEpilogueContext& lt, void* out, cudaDataType_t out_type, const bf16* inp, const bf16* weight,
                         const float* bias, int N, int IC, int OC, cudaStream_t stream);
void matmul_forward_gelu(const GemmEpilogueContext& lt, bf16* out, bf16* pre_gelu, const bf16* inp, const bf16* weight, const float* bias,
                         int N, int IC, int OC, cudaStream_t stream);
void matmul_dinp_dgelu(const GemmEpilogueContext& lt, bf16* dinp, const bf16* dout, const bf16* weight, const bf16* pre_gelu, int N, int IC,
                       int OC, cudaStream_t stream);

// attention.cu: causal multi-head attention over qkv[B, T, 3C] (q | k | v, heads of C/NH channels),
// one warp per query row with an online softmax; keeps only the log-sum-exp per row (lse[B, NH, T])
// and recomputes the probabilities in backward. dqkv is overwritten; scratch holds B*NH*T floats.
void attention_forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int C, int NH, cudaStream_t stream);
void attention_backward(bf16* dqkv, float* scratch, const bf16* dout, const bf16* qkv, const bf16* out, const float* lse, int B, int T,
                        int C, int NH, cudaStream_t stream);

// attention_tensor_core.cu (`--attention tensor-core`): the same attention as cuBLAS strided-batched
// GEMMs and a fused causal softmax. Forward writes out and the bf16 probabilities probs[B, NH, T, T]
// (kept for backward); backward overwrites dqkv. Both use the scratch below (sizes: memory_plan.cpp).
struct TensorCoreScratch {
  bf16* qkv_heads = nullptr;   // q | k | v head-major, 3 x [B, NH, T, hs]
  bf16* dqkv_heads = nullptr;  // dq | dk | dv head-major
  bf16* heads = nullptr;       // out (forward) or dout (backward) head-major, [B, NH, T, hs]
  float* scores = nullptr;     // raw scores (forward), dprobs (backward): fp32 [B, NH, T, T]
  bf16* dscores = nullptr;     // gradient of the raw scores, [B, NH, T, T]
};
void attention_forward_tensor_core(cublasHandle_t handle, bf16* out, bf16* probs, const bf16* qkv, const TensorCoreScratch& scratch, int B,
                                   int T, int C, int NH, cudaStream_t stream);
void attention_backward_tensor_core(cublasHandle_t handle, bf16* dqkv, const bf16* dout, const bf16* qkv, const bf16* probs,
                                    const TensorCoreScratch& scratch, int B, int T, int C, int NH, cudaStream_t stream);

// elementwise.cu. vector_loads (--vector-loads, vector_loads.hpp): 16-byte packs and a scalar tail
// where every pointer is 16-byte aligned; the one-element-per-thread kernels otherwise (the reference).
void gelu_forward(bf16* out, const bf16* inp, std::size_t n, cudaStream_t stream, bool vector_loads = false);
void gelu_backward(bf16* dinp, const bf16* inp, const bf16* dout, std::size_t n, cudaStream_t stream,
                   bool vector_loads = false);  // dinp overwritten
void residual_forward(float* out, const float* a, const float* b, std::size_t n, cudaStream_t stream, bool vector_loads = false);
void to_bf16(bf16* out, const float* inp, std::size_t n, cudaStream_t stream, bool vector_loads = false);
void fill_bf16(bf16* out, float value, std::size_t n, cudaStream_t stream);

// cross_entropy.cu: losses[n] = logsumexp(logits[n]) - logits[n][target]; with dlogits non-null also
// dlogits = dloss * (softmax(logits) - onehot(target)) in bf16. One block per row; rows `stride`
// apart (V, or logits_stride(V) under --pad-vocab), columns V.. of a row neither read nor written.
void softmax_cross_entropy(float* losses, bf16* dlogits, const float* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int stride, cudaStream_t stream);
// --fused-classifier (fused_classifier.hpp): the same from bf16 logits (rows `stride` apart), with
// write_dlogits each logit overwritten in place by its gradient, one read of a row for the statistics.
void fused_classifier(float* losses, bf16* logits, const std::int32_t* targets, float dloss, int N, int V, int stride, bool write_dlogits,
                      cudaStream_t stream);

// optimizer.cu: AdamW exactly as ../optimizer.cpp on `count` elements (grad scaled by grad_scale
// first); sum of squares in double into *result (added to it when accumulate), in a fixed order.
void adamw_update(float* parameters, const float* gradients, float* m, float* v, std::size_t count, float lr, float beta1, float beta2,
                  float epsilon, float weight_decay, float grad_scale, float correction1, float correction2, cudaStream_t stream);
// One AdamW step over `pieces` (optimizer.hpp: offsets into p and g, state offsets into m and v, the
// decay flag per tensor), with bias correction for the 1-based step t, as AdamW::step does it.
void adamw_step(const std::vector<AdamWPiece>& pieces, float* p, const float* g, float* m, float* v, const AdamWSettings& settings,
                float lr, float grad_scale, long t, cudaStream_t stream);
// The same step in one launch (--multi-tensor-adamw): `table` on the device, `count` pieces of
// multi_tensor_table() holding `total` elements.
void adamw_step_multi_tensor(const MultiTensorPiece* table, int count, std::uint64_t total, float* p, const float* g, float* m, float* v,
                             const AdamWSettings& settings, float lr, float grad_scale, long t, cudaStream_t stream);
inline constexpr int kSumOfSquaresBlocks = static_cast<int>(kSumOfSquaresPartials);  // partials holds this many doubles
void sum_of_squares(double* result, double* partials, const float* values, std::size_t count, bool accumulate, cudaStream_t stream);

}  // namespace gpudirect::train::cuda
