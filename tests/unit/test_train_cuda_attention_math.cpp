// The CUDA attention kernels' loops, run on the host over their shared arithmetic and indexing
// (train/cuda/attention_math.hpp: row order, qkv/out offsets, the online softmax, p from the
// log-sum-exp, dscore), against the CPU reference (cpu/attention.cpp). Only the split of a head's
// channels over a warp's lanes (a plain sum here) is left to the GPU check.
#include <catch2/catch.hpp>

#include "train/cpu/attention.hpp"
#include "train/cuda/attention_math.hpp"

#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

namespace {

float dot(const float* a, const float* b, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// attention_forward_kernel: one row (b, h, t) at a time.
void forward_as_kernel(std::vector<float>& out, std::vector<float>& lse, const std::vector<float>& qkv, const AttentionShape& g) {
  std::vector<float> acc(static_cast<std::size_t>(g.hs));
  for (int row = 0; row < g.rows(); ++row) {
    const int t = g.t_of(row), h = g.h_of(row), b = g.b_of(row);
    const float* q = qkv.data() + g.qkv_at(b, t, h);
    std::fill(acc.begin(), acc.end(), 0.0f);
    OnlineSoftmax softmax;
    for (int j = 0; j <= t; ++j) {
      const float* key = qkv.data() + g.qkv_at(b, j, h);
      float p = 0.0f;
      const float correction = softmax.add(dot(q, key + g.C, g.hs) * g.scale, p);
      for (int i = 0; i < g.hs; ++i)
        acc[static_cast<std::size_t>(i)] = acc[static_cast<std::size_t>(i)] * correction + p * key[2 * g.C + i];
    }
    for (int i = 0; i < g.hs; ++i) out[g.out_at(b, t, h) + static_cast<std::size_t>(i)] = acc[static_cast<std::size_t>(i)] / softmax.sum;
    lse[static_cast<std::size_t>(row)] = softmax.log_sum_exp();
  }
}

// attention_delta_kernel, attention_dq_kernel, attention_dkv_kernel.
void backward_as_kernels(std::vector<float>& dqkv, const std::vector<float>& dout, const std::vector<float>& qkv,
                         const std::vector<float>& out, const std::vector<float>& lse, const AttentionShape& g) {
  std::vector<float> delta(static_cast<std::size_t>(g.rows()));
  for (int row = 0; row < g.rows(); ++row) {
    const std::size_t at = g.out_at(g.b_of(row), g.t_of(row), g.h_of(row));
    delta[static_cast<std::size_t>(row)] = dot(dout.data() + at, out.data() + at, g.hs);
  }
  for (int row = 0; row < g.rows(); ++row) {
    const int t = g.t_of(row), h = g.h_of(row), b = g.b_of(row);
    const float* q = qkv.data() + g.qkv_at(b, t, h);
    const float* d = dout.data() + g.out_at(b, t, h);
    std::vector<float> acc(static_cast<std::size_t>(g.hs), 0.0f);
    for (int j = 0; j <= t; ++j) {
      const float* key = qkv.data() + g.qkv_at(b, j, h);
      const float p = attention_probability(dot(q, key + g.C, g.hs) * g.scale, lse[static_cast<std::size_t>(row)]);
      const float ds = attention_dscore(p, dot(d, key + 2 * g.C, g.hs), delta[static_cast<std::size_t>(row)]);
      for (int i = 0; i < g.hs; ++i) acc[static_cast<std::size_t>(i)] += ds * key[g.C + i];
    }
    for (int i = 0; i < g.hs; ++i) dqkv[g.qkv_at(b, t, h) + static_cast<std::size_t>(i)] = g.scale * acc[static_cast<std::size_t>(i)];
  }
  for (int row = 0; row < g.rows(); ++row) {
    const int j = g.t_of(row), h = g.h_of(row), b = g.b_of(row);
    const int head_rows = row - j;
    const std::size_t key = g.qkv_at(b, j, h);
    std::vector<float> dk(static_cast<std::size_t>(g.hs), 0.0f), dv(dk.size(), 0.0f);
    for (int t = j; t < g.T; ++t) {
      const float* q = qkv.data() + g.qkv_at(b, t, h);
      const float* d = dout.data() + g.out_at(b, t, h);
      const std::size_t r = static_cast<std::size_t>(head_rows + t);
      const float p = attention_probability(dot(qkv.data() + key + g.C, q, g.hs) * g.scale, lse[r]);
      const float ds = attention_dscore(p, dot(qkv.data() + key + 2 * g.C, d, g.hs), delta[r]);
      for (int i = 0; i < g.hs; ++i) {
        dk[static_cast<std::size_t>(i)] += ds * q[i];
        dv[static_cast<std::size_t>(i)] += p * d[i];
      }
    }
    for (int i = 0; i < g.hs; ++i) {
      dqkv[key + static_cast<std::size_t>(g.C + i)] = g.scale * dk[static_cast<std::size_t>(i)];
      dqkv[key + static_cast<std::size_t>(2 * g.C + i)] = dv[static_cast<std::size_t>(i)];
    }
  }
}

}  // namespace

TEST_CASE("attention math: the kernels' loops give the CPU reference's output and gradients", "[train][cuda]") {
  const int B = 2, T = 9, C = 12, NH = 3;
  const AttentionShape g = attention_shape(B, T, C, NH);
  CHECK(g.hs == 4);
  CHECK(g.rows() == B * NH * T);
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::size_t btc = static_cast<std::size_t>(B) * T * C;
  std::vector<float> qkv(3 * btc), dout(btc);
  for (auto& x : qkv) x = normal(rng);
  for (auto& x : dout) x = normal(rng);

  std::vector<float> want_out(btc), att(static_cast<std::size_t>(B) * NH * T * T), scratch(static_cast<std::size_t>(T) * T);
  cpu::attention_forward(want_out.data(), att.data(), qkv.data(), B, T, C, NH, 1);
  std::vector<float> got_out(btc, -9.0f), lse(static_cast<std::size_t>(g.rows()));
  forward_as_kernel(got_out, lse, qkv, g);
  for (std::size_t i = 0; i < btc; ++i) REQUIRE(got_out[i] == Approx(want_out[i]).margin(1e-5));

  std::vector<float> want_dqkv(3 * btc, 0.0f), got_dqkv(3 * btc, -9.0f);
  cpu::attention_backward(want_dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH, 1);
  backward_as_kernels(got_dqkv, dout, qkv, got_out, lse, g);
  for (std::size_t i = 0; i < got_dqkv.size(); ++i) REQUIRE(got_dqkv[i] == Approx(want_dqkv[i]).margin(1e-4));
}

TEST_CASE("attention math: the online softmax equals the two-pass one whatever the order of magnitudes", "[train][cuda]") {
  const std::vector<float> scores{-3.0f, 40.0f, 0.5f, 39.0f, -80.0f};
  OnlineSoftmax softmax;
  std::vector<float> weights;  // each score's weight in the final normalisation
  for (const float s : scores) {
    float p = 0.0f;
    const float correction = softmax.add(s, p);
    for (float& w : weights) w *= correction;
    weights.push_back(p);
  }
  double max = 40.0, sum = 0;
  for (const float s : scores) sum += std::exp(s - max);
  CHECK(softmax.log_sum_exp() == Approx(max + std::log(sum)).epsilon(1e-6));
  for (std::size_t i = 0; i < scores.size(); ++i) CHECK(weights[i] / softmax.sum == Approx(std::exp(scores[i] - max) / sum).margin(1e-7));
  CHECK(attention_probability(scores[1], softmax.log_sum_exp()) == Approx(std::exp(40.0 - max) / sum).epsilon(1e-5));
}
