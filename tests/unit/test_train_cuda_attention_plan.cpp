// The tensor-core attention (train/cuda/attention_tensor_core.cu) run on the host: its six batched
// cuBLAS products (train/cuda/attention_plan.hpp) through a host emulation of
// cublasGemmStridedBatchedEx, its head-major reordering and its fused causal softmax (forward and
// backward, over attention_math.hpp) as the kernels loop, against the CPU attention
// (cpu/attention.cpp). T != hs and B, NH > 1, so a swapped operand, size or stride fails.
#include <catch2/catch.hpp>

#include "host_gemm.hpp"

#include "train/cpu/attention.hpp"
#include "train/cuda/attention_math.hpp"
#include "train/cuda/attention_plan.hpp"

#include <algorithm>
#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

namespace {

using HostOperands = AttentionOperands<float>;

// For each i < batch: C_i (m x n, column-major, ldc) = op(A_i) op(B_i), overwritten, as
// cublasGemmStridedBatchedEx with alpha 1 and beta 0; X_i starts stride_x elements after X_{i-1}.
void host_batched_gemm(const BatchedGemmPlan& p, const HostOperands& operands, float* c) {
  for (int i = 0; i < p.batch; ++i)
    gpudirect::testing::host_gemm(p.transpose_a, p.transpose_b, p.m, p.n, p.k, operands[p.a] + i * p.stride_a, p.lda,
                                  operands[p.b] + i * p.stride_b, p.ldb, 0.0f, c + i * p.stride_c, p.ldc);
}

// to_heads_kernel / from_heads_kernel: `parts` head-major copies, one after another, of channel
// blocks 0, C, 2C ... of a [B, T, parts * C] tensor.
std::vector<float> to_heads(const std::vector<float>& tokens, int parts, const AttentionShape& g) {
  const std::size_t n = static_cast<std::size_t>(g.rows()) * g.hs;
  std::vector<float> heads(parts * n);
  for (int part = 0; part < parts; ++part)
    for (std::size_t i = 0; i < n; ++i) {
      const int row = static_cast<int>(i / g.hs), d = static_cast<int>(i % g.hs);
      heads[part * n + i] = tokens[g.token_at(row, parts * g.C, part * g.C) + d];
    }
  return heads;
}
std::vector<float> from_heads(const std::vector<float>& heads, int parts, const AttentionShape& g) {
  const std::size_t n = static_cast<std::size_t>(g.rows()) * g.hs;
  std::vector<float> tokens(parts * n, -9.0f);
  for (int part = 0; part < parts; ++part)
    for (std::size_t i = 0; i < n; ++i) {
      const int row = static_cast<int>(i / g.hs), d = static_cast<int>(i % g.hs);
      tokens[g.token_at(row, parts * g.C, part * g.C) + d] = heads[part * n + i];
    }
  return tokens;
}

// causal_softmax_kernel: row (b, h, t) of the raw scores to probabilities, 0 above the diagonal.
std::vector<float> causal_softmax(const std::vector<float>& scores, const AttentionShape& g) {
  std::vector<float> probs(scores.size(), -9.0f);
  for (int row = 0; row < g.rows(); ++row) {
    const int t = g.t_of(row);
    const float* s = scores.data() + static_cast<std::size_t>(row) * g.T;
    float* p = probs.data() + static_cast<std::size_t>(row) * g.T;
    float max = -INFINITY, sum = 0.0f;
    for (int j = 0; j <= t; ++j) max = std::max(max, s[j] * g.scale);
    for (int j = 0; j <= t; ++j) sum += causal_softmax_term(s[j], g.scale, max);
    for (int j = 0; j < g.T; ++j) p[j] = j <= t ? causal_softmax_term(s[j], g.scale, max) / sum : 0.0f;
  }
  return probs;
}

// causal_softmax_backward_kernel: the gradient of the raw scores, 0 above the diagonal.
std::vector<float> causal_softmax_backward(const std::vector<float>& dprobs, const std::vector<float>& probs, const AttentionShape& g) {
  std::vector<float> dscores(probs.size(), -9.0f);
  for (int row = 0; row < g.rows(); ++row) {
    const int t = g.t_of(row);
    const std::size_t at = static_cast<std::size_t>(row) * g.T;
    float dot = 0.0f;
    for (int j = 0; j <= t; ++j) dot += probs[at + j] * dprobs[at + j];
    for (int j = 0; j < g.T; ++j) dscores[at + j] = j <= t ? raw_dscore(probs[at + j], dprobs[at + j], dot, g.scale) : 0.0f;
  }
  return dscores;
}

void require_close(const std::vector<float>& want, const std::vector<float>& got, double margin) {
  REQUIRE(want.size() == got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(want[i]).margin(margin));
  }
}

}  // namespace

TEST_CASE("tensor-core attention: the batched GEMM plans, reordering and softmax give the CPU attention", "[train][cuda]") {
  const int B = 2, T = 7, C = 15, NH = 3;  // hs 5: no size equals another
  const AttentionShape g = attention_shape(B, T, C, NH);
  const AttentionStrides s = attention_strides(B, T, C, NH);
  REQUIRE(s.hs == g.hs);
  REQUIRE(s.batch == B * NH);
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::size_t btc = static_cast<std::size_t>(B) * T * C, scores_size = static_cast<std::size_t>(B) * NH * T * T;
  std::vector<float> qkv(3 * btc), dout(btc);
  for (auto& x : qkv) x = 2.0f * normal(rng);  // large enough that the softmax is far from uniform
  for (auto& x : dout) x = normal(rng);

  // Forward: reorder, scores, softmax, values, back to tokens.
  const std::vector<float> qkv_heads = to_heads(qkv, 3, g);
  HostOperands operands;
  operands.query = qkv_heads.data();
  operands.key = qkv_heads.data() + btc;
  operands.value = qkv_heads.data() + 2 * btc;
  std::vector<float> scores(scores_size, -9.0f), out_heads(btc, -9.0f);
  host_batched_gemm(scores_plan(s), operands, scores.data());
  const std::vector<float> probs = causal_softmax(scores, g);
  operands.probs = probs.data();
  host_batched_gemm(values_plan(s), operands, out_heads.data());
  const std::vector<float> got_out = from_heads(out_heads, 1, g);

  std::vector<float> want_out(btc), want_probs(scores_size);
  cpu::attention_forward(want_out.data(), want_probs.data(), qkv.data(), B, T, C, NH, 1);
  require_close(want_probs, probs, 1e-6);  // the CPU's att is [B, NH, T, T] too, zeros above the diagonal
  require_close(want_out, got_out, 1e-5);

  // Backward: dprobs and dv, the softmax backward, dq and dk, back to tokens.
  const std::vector<float> dout_heads = to_heads(dout, 1, g);
  operands.dout = dout_heads.data();
  std::vector<float> dprobs(scores_size, -9.0f), dqkv_heads(3 * btc, -9.0f);
  host_batched_gemm(dprobs_plan(s), operands, dprobs.data());
  host_batched_gemm(dvalues_plan(s), operands, dqkv_heads.data() + 2 * btc);
  const std::vector<float> dscores = causal_softmax_backward(dprobs, probs, g);
  operands.dscores = dscores.data();
  host_batched_gemm(dquery_plan(s), operands, dqkv_heads.data());
  host_batched_gemm(dkey_plan(s), operands, dqkv_heads.data() + btc);
  const std::vector<float> got_dqkv = from_heads(dqkv_heads, 3, g);

  std::vector<float> want_dqkv(3 * btc, 0.0f), scratch(static_cast<std::size_t>(T) * T);
  cpu::attention_backward(want_dqkv.data(), scratch.data(), dout.data(), qkv.data(), want_probs.data(), B, T, C, NH, 1);
  require_close(want_dqkv, got_dqkv, 1e-4);
}

TEST_CASE("tensor-core attention: the plans fit cuBLAS's rules at gpt2-124m's shape and no batch entry overlaps the next",
          "[train][cuda]") {
  const AttentionStrides s = attention_strides(32, 1024, 768, 12);
  for (const BatchedGemmPlan& p : {scores_plan(s), values_plan(s), dprobs_plan(s), dvalues_plan(s), dquery_plan(s), dkey_plan(s)}) {
    CHECK(p.batch == 32 * 12);
    // lda >= rows of A as stored (m, or k when transposed), likewise ldb; ldc >= m.
    CHECK(p.lda >= (p.transpose_a ? p.k : p.m));
    CHECK(p.ldb >= (p.transpose_b ? p.n : p.k));
    CHECK(p.ldc >= p.m);
    // Each batch entry's matrix (columns x leading dimension) ends where the next begins, or before.
    CHECK(p.stride_a >= static_cast<long long>(p.lda) * (p.transpose_a ? p.m : p.k));
    CHECK(p.stride_b >= static_cast<long long>(p.ldb) * (p.transpose_b ? p.k : p.n));
    CHECK(p.stride_c >= static_cast<long long>(p.ldc) * p.n);
  }
}
