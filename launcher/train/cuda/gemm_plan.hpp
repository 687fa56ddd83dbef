// The four cuBLAS products of a linear layer, as data: which operand goes where, transposed or not,
// the sizes and the leading dimensions. cuBLAS is column-major and our matrices are row-major: a
// row-major [R, K] matrix is the column-major [K, R] one, i.e. its transpose, so out = inp W^T
// (row-major) is computed as out^T = W inp^T (column-major). matmul.cu launches exactly these plans,
// and the unit tests run them through a host column-major gemm against the CPU layer, so the
// transposes are checked without a GPU.
#pragma once

namespace gpudirect::train::cuda {

enum class Operand { inp, weight, dout, ones };

// The four buffers a plan names, looked up by Operand: device bf16 pointers for cuBLAS, host floats
// in the unit test that checks the plans.
template <typename T>
struct Operands {
  const T* inp = nullptr;
  const T* weight = nullptr;
  const T* dout = nullptr;
  const T* ones = nullptr;
  const T* operator[](Operand o) const {
    switch (o) {
      case Operand::inp:
        return inp;
      case Operand::weight:
        return weight;
      case Operand::dout:
        return dout;
      case Operand::ones:
        return ones;
    }
    return nullptr;
  }
};

struct GemmPlan {
  bool transpose_a = false, transpose_b = false;
  int m = 0, n = 0, k = 0;
  Operand a = Operand::inp, b = Operand::inp;
  int lda = 0, ldb = 0, ldc = 0;
  float beta = 0;  // 1: accumulate into C
};

// `stride` is the row stride of the [N, OC] matrix (out, dout): OC, or more where its rows are padded
// (the logits under --pad-vocab, speed_options.hpp); the padded columns are never written or read.
// out[N, OC] = inp[N, IC] weight[OC, IC]^T (+= onto a bias already in out when accumulate).
constexpr GemmPlan forward_plan(int N, int IC, int OC, bool accumulate, int stride = 0) {
  return {true, false, OC, N, IC, Operand::weight, Operand::inp, IC, IC, stride > 0 ? stride : OC, accumulate ? 1.0f : 0.0f};
}
// dinp[N, IC] = dout[N, OC] weight[OC, IC] (overwritten).
constexpr GemmPlan dinp_plan(int N, int IC, int OC, int stride = 0) {
  return {false, false, IC, N, OC, Operand::weight, Operand::dout, IC, stride > 0 ? stride : OC, IC, 0.0f};
}
// dweight[OC, IC] += dout[N, OC]^T inp[N, IC].
constexpr GemmPlan dweight_plan(int N, int IC, int OC, int stride = 0) {
  return {false, true, IC, OC, N, Operand::inp, Operand::dout, IC, stride > 0 ? stride : OC, IC, 1.0f};
}
// dbias[OC] += dout[N, OC]^T ones[N].
constexpr GemmPlan dbias_plan(int N, int OC) { return {false, false, OC, 1, N, Operand::dout, Operand::ones, OC, N, OC, 1.0f}; }

}  // namespace gpudirect::train::cuda
