// The six cuBLAS strided-batched products of the tensor-core attention, as data, one batch entry per
// (b, h): which operand goes where, transposed or not, the sizes, leading dimensions and strides.
// Every operand is head-major, [B, NH, T, hs] (q, k, v, dout) or [B, NH, T, T] (probabilities,
// dscores), row-major within a head. cuBLAS is column-major, so a row-major X = Y Z is computed as
// X^T = Z^T Y^T (see gemm_plan.hpp): the second row-major factor is cuBLAS's A, the first its B.
// attention_tensor_core.cu launches exactly these plans, and the unit tests run them through a host
// emulation of cublasGemmStridedBatchedEx against the CPU attention, forward and backward.
#pragma once

namespace gpudirect::train::cuda {

enum class AttentionOperand { query, key, value, probs, dout, dscores };

// The six inputs a plan names: device bf16 pointers for cuBLAS, host floats in the unit test.
template <typename T>
struct AttentionOperands {
  const T* query = nullptr;
  const T* key = nullptr;
  const T* value = nullptr;
  const T* probs = nullptr;
  const T* dout = nullptr;
  const T* dscores = nullptr;
  const T* operator[](AttentionOperand o) const {
    switch (o) {
      case AttentionOperand::query:
        return query;
      case AttentionOperand::key:
        return key;
      case AttentionOperand::value:
        return value;
      case AttentionOperand::probs:
        return probs;
      case AttentionOperand::dout:
        return dout;
      case AttentionOperand::dscores:
        return dscores;
    }
    return nullptr;
  }
};

// C_i = op(A_i) op(B_i) for i < batch, C_i overwritten (beta 0, alpha 1): the scale lives in the softmax.
struct BatchedGemmPlan {
  bool transpose_a = false, transpose_b = false;
  int m = 0, n = 0, k = 0;
  AttentionOperand a = AttentionOperand::query, b = AttentionOperand::query;
  int lda = 0, ldb = 0, ldc = 0;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  int batch = 0;
};

// One (b, h) of a head-major tensor: T x hs (q, k, v, dout, out) or T x T (scores, probabilities).
struct AttentionStrides {
  int T = 0, hs = 0, batch = 0;
  constexpr long long head() const { return static_cast<long long>(T) * hs; }
  constexpr long long scores() const { return static_cast<long long>(T) * T; }
};
constexpr AttentionStrides attention_strides(int B, int T, int C, int NH) { return {T, C / NH, B * NH}; }

// Forward. scores[T, T] = q[T, hs] k[T, hs]^T (raw: not yet scaled).
constexpr BatchedGemmPlan scores_plan(AttentionStrides s) {
  return {.transpose_a = true,
          .transpose_b = false,
          .m = s.T,
          .n = s.T,
          .k = s.hs,
          .a = AttentionOperand::key,
          .b = AttentionOperand::query,
          .lda = s.hs,
          .ldb = s.hs,
          .ldc = s.T,
          .stride_a = s.head(),
          .stride_b = s.head(),
          .stride_c = s.scores(),
          .batch = s.batch};
}
// out[T, hs] = probs[T, T] v[T, hs].
constexpr BatchedGemmPlan values_plan(AttentionStrides s) {
  return {.transpose_a = false,
          .transpose_b = false,
          .m = s.hs,
          .n = s.T,
          .k = s.T,
          .a = AttentionOperand::value,
          .b = AttentionOperand::probs,
          .lda = s.hs,
          .ldb = s.T,
          .ldc = s.hs,
          .stride_a = s.head(),
          .stride_b = s.scores(),
          .stride_c = s.head(),
          .batch = s.batch};
}

// Backward. dprobs[T, T] = dout[T, hs] v[T, hs]^T.
constexpr BatchedGemmPlan dprobs_plan(AttentionStrides s) {
  return {.transpose_a = true,
          .transpose_b = false,
          .m = s.T,
          .n = s.T,
          .k = s.hs,
          .a = AttentionOperand::value,
          .b = AttentionOperand::dout,
          .lda = s.hs,
          .ldb = s.hs,
          .ldc = s.T,
          .stride_a = s.head(),
          .stride_b = s.head(),
          .stride_c = s.scores(),
          .batch = s.batch};
}
// dv[T, hs] = probs[T, T]^T dout[T, hs].
constexpr BatchedGemmPlan dvalues_plan(AttentionStrides s) {
  return {.transpose_a = false,
          .transpose_b = true,
          .m = s.hs,
          .n = s.T,
          .k = s.T,
          .a = AttentionOperand::dout,
          .b = AttentionOperand::probs,
          .lda = s.hs,
          .ldb = s.T,
          .ldc = s.hs,
          .stride_a = s.head(),
          .stride_b = s.scores(),
          .stride_c = s.head(),
          .batch = s.batch};
}
// dq[T, hs] = dscores[T, T] k[T, hs] (dscores is the gradient of the raw scores: the scale is in it).
constexpr BatchedGemmPlan dquery_plan(AttentionStrides s) {
  return {.transpose_a = false,
          .transpose_b = false,
          .m = s.hs,
          .n = s.T,
          .k = s.T,
          .a = AttentionOperand::key,
          .b = AttentionOperand::dscores,
          .lda = s.hs,
          .ldb = s.T,
          .ldc = s.hs,
          .stride_a = s.head(),
          .stride_b = s.scores(),
          .stride_c = s.head(),
          .batch = s.batch};
}
// dk[T, hs] = dscores[T, T]^T q[T, hs].
constexpr BatchedGemmPlan dkey_plan(AttentionStrides s) {
  return {.transpose_a = false,
          .transpose_b = true,
          .m = s.hs,
          .n = s.T,
          .k = s.T,
          .a = AttentionOperand::query,
          .b = AttentionOperand::dscores,
          .lda = s.hs,
          .ldb = s.T,
          .ldc = s.hs,
          .stride_a = s.head(),
          .stride_b = s.scores(),
          .stride_c = s.head(),
          .batch = s.batch};
}

}  // namespace gpudirect::train::cuda
