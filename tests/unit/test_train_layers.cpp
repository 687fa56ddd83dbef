// Finite-difference checks of every CPU kernel's backward against its forward. Each check uses the
// objective sum(out * R) for a random R, whose gradient w.r.t. out is R.
#include <catch2/catch.hpp>

#include "train/cpu/attention.hpp"
#include "train/cpu/cross_entropy.hpp"
#include "train/cpu/encoder.hpp"
#include "train/cpu/gelu.hpp"
#include "train/cpu/layernorm.hpp"
#include "train/cpu/matmul.hpp"
#include "train/cpu/residual.hpp"
#include "train_gradient_check.hpp"

#include <random>

using namespace gpudirect::train::cpu;
using gpudirect::train::testing::all_elements;
using gpudirect::train::testing::finite_difference_error;

namespace {

constexpr double kTolerance = 2e-3;
constexpr int kThreads = 1;  // the model tests cover two threads

std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace

TEST_CASE("encoder backward matches finite differences", "[train]") {
  std::mt19937 rng(1);
  const int B = 2, T = 3, C = 4, V = 5;
  // Token 1 appears twice: its wte row collects two gradients.
  const std::vector<std::int32_t> tokens{1, 4, 1, 0, 2, 3};
  auto wte = random_vector(V * C, rng), wpe = random_vector(T * C, rng), R = random_vector(B * T * C, rng);
  std::vector<float> out(B * T * C), dwte(V * C, 0.5f), dwpe(T * C, 0.25f);
  encoder_backward(dwte.data(), dwpe.data(), R.data(), tokens.data(), B, T, C, kThreads);
  for (auto& g : dwte) g -= 0.5f;  // it adds into what is there
  for (auto& g : dwpe) g -= 0.25f;
  auto f = [&] {
    encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C, kThreads);
    return dot(out, R);
  };
  CHECK(finite_difference_error(wte.data(), all_elements(wte.size()), dwte.data(), dwte.size(), f) < kTolerance);
  CHECK(finite_difference_error(wpe.data(), all_elements(wpe.size()), dwpe.data(), dwpe.size(), f) < kTolerance);
}

TEST_CASE("layernorm backward matches finite differences", "[train]") {
  std::mt19937 rng(2);
  const int N = 3, C = 40;  // C > one column block of the weight-gradient split
  auto x = random_vector(N * C, rng, -2, 2), w = random_vector(C, rng, 0.5f, 1.5f), b = random_vector(C, rng);
  auto R = random_vector(N * C, rng);
  std::vector<float> out(N * C), mean(N), rstd(N), dx(N * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  auto f = [&] {
    layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C, kThreads);
    return dot(out, R);
  };
  f();
  layernorm_backward(dx.data(), dw.data(), db.data(), R.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C, kThreads);
  CHECK(finite_difference_error(x.data(), all_elements(x.size()), dx.data(), dx.size(), f) < kTolerance);
  CHECK(finite_difference_error(w.data(), all_elements(w.size()), dw.data(), dw.size(), f) < kTolerance);
  CHECK(finite_difference_error(b.data(), all_elements(b.size()), db.data(), db.size(), f) < kTolerance);
}

TEST_CASE("matmul backward matches finite differences, with and without bias", "[train]") {
  std::mt19937 rng(3);
  const int N = 5, IC = 7, OC = 36;
  auto x = random_vector(N * IC, rng), w = random_vector(OC * IC, rng), b = random_vector(OC, rng);
  auto R = random_vector(N * OC, rng);
  std::vector<float> out(N * OC), dx(N * IC, 0.0f), dw(OC * IC, 0.0f), db(OC, 0.0f);
  matmul_backward(dx.data(), dw.data(), db.data(), R.data(), x.data(), w.data(), N, IC, OC, kThreads);
  auto f = [&] {
    matmul_forward(out.data(), x.data(), w.data(), b.data(), N, IC, OC, kThreads);
    return dot(out, R);
  };
  CHECK(finite_difference_error(x.data(), all_elements(x.size()), dx.data(), dx.size(), f) < kTolerance);
  CHECK(finite_difference_error(w.data(), all_elements(w.size()), dw.data(), dw.size(), f) < kTolerance);
  CHECK(finite_difference_error(b.data(), all_elements(b.size()), db.data(), db.size(), f) < kTolerance);

  std::vector<float> dw2(OC * IC, 0.0f);
  matmul_backward(nullptr, dw2.data(), nullptr, R.data(), x.data(), w.data(), N, IC, OC, kThreads);
  CHECK(dw2 == dw);
  auto g = [&] {
    matmul_forward(out.data(), x.data(), w.data(), nullptr, N, IC, OC, kThreads);
    return dot(out, R);
  };
  CHECK(finite_difference_error(w.data(), all_elements(w.size()), dw2.data(), dw2.size(), g) < kTolerance);
}

TEST_CASE("causal attention backward matches finite differences", "[train]") {
  std::mt19937 rng(4);
  const int B = 1, T = 66, C = 8, NH = 2;  // T > one 64-query block
  auto qkv = random_vector(B * T * 3 * C, rng, -1.5f, 1.5f), R = random_vector(B * T * C, rng);
  std::vector<float> out(B * T * C), att(B * NH * T * T), dqkv(qkv.size(), 0.0f), scratch(T * T);
  auto f = [&] {
    attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH, kThreads);
    return dot(out, R);
  };
  f();
  // Causal: no weight on later positions, and each row is a distribution.
  for (int bh = 0; bh < B * NH; ++bh) {
    for (int t = 0; t < T; ++t) {
      double sum = 0;
      for (int t2 = 0; t2 < T; ++t2) {
        const float p = att[static_cast<std::size_t>((bh * T + t) * T + t2)];
        if (t2 > t) CHECK(p == 0.0f);
        sum += p;
      }
      CHECK(sum == Approx(1.0).epsilon(1e-5));
    }
  }
  attention_backward(dqkv.data(), scratch.data(), R.data(), qkv.data(), att.data(), B, T, C, NH, kThreads);
  CHECK(finite_difference_error(qkv.data(), all_elements(qkv.size()), dqkv.data(), dqkv.size(), f) < kTolerance);
}

TEST_CASE("GELU (tanh) backward matches finite differences, known values", "[train]") {
  std::mt19937 rng(5);
  auto x = random_vector(64, rng, -4, 4), R = random_vector(64, rng);
  std::vector<float> out(64), dx(64, 0.0f);
  gelu_backward(dx.data(), x.data(), R.data(), x.size(), kThreads);
  auto f = [&] {
    gelu_forward(out.data(), x.data(), x.size(), kThreads);
    return dot(out, R);
  };
  CHECK(finite_difference_error(x.data(), all_elements(x.size()), dx.data(), dx.size(), f, 1e-3f) < kTolerance);
  // torch.nn.functional.gelu(torch.tensor([-1., 0., 1., 2.]), approximate="tanh")
  const std::vector<float> in{-1.0f, 0.0f, 1.0f, 2.0f};
  std::vector<float> y(4);
  gelu_forward(y.data(), in.data(), 4, 1);
  CHECK(y[0] == Approx(-0.15880801).epsilon(1e-6));
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == Approx(0.84119199).epsilon(1e-6));
  CHECK(y[3] == Approx(1.95459769).epsilon(1e-6));
}

TEST_CASE("residual forward adds, backward adds the gradient into both inputs", "[train]") {
  std::mt19937 rng(6);
  auto a = random_vector(10, rng), b = random_vector(10, rng), R = random_vector(10, rng);
  std::vector<float> out(10), da(10, 0.0f), db(10, 0.0f);
  residual_backward(da.data(), db.data(), R.data(), 10, kThreads);
  auto f = [&] {
    residual_forward(out.data(), a.data(), b.data(), 10, kThreads);
    return dot(out, R);
  };
  CHECK(finite_difference_error(a.data(), all_elements(10), da.data(), 10, f) < kTolerance);
  CHECK(finite_difference_error(b.data(), all_elements(10), db.data(), 10, f) < kTolerance);
}

TEST_CASE("softmax cross-entropy backward matches finite differences, in place works", "[train]") {
  std::mt19937 rng(7);
  const int N = 4, V = 9;
  const std::vector<std::int32_t> targets{0, 8, 3, 3};
  auto logits = random_vector(N * V, rng, -3, 3);
  std::vector<float> probs(N * V), losses(N), dlogits(N * V);
  const float dloss = 0.7f;
  auto f = [&] {
    softmax_cross_entropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V, kThreads);
    double s = 0;
    for (float l : losses) s += dloss * static_cast<double>(l);
    return s;
  };
  f();
  softmax_cross_entropy_backward(dlogits.data(), probs.data(), targets.data(), dloss, N, V, kThreads);
  CHECK(finite_difference_error(logits.data(), all_elements(logits.size()), dlogits.data(), dlogits.size(), f, 1e-3f) < kTolerance);
  // Loss of a uniform row is log V; in place gives the same probabilities.
  std::vector<float> uniform(V, 0.3f), l1(1);
  const std::int32_t t = 2;
  softmax_cross_entropy_forward(l1.data(), uniform.data(), uniform.data(), &t, 1, V, 1);
  CHECK(l1[0] == Approx(std::log(9.0)).epsilon(1e-6));
  for (float p : uniform) CHECK(p == Approx(1.0 / 9).epsilon(1e-6));
}
