// The cuBLAS products of the CUDA linear layer (train/cuda/gemm_plan.hpp), run through a host
// column-major gemm with cuBLAS's semantics, against the CPU layer (cpu/matmul.cpp): the transposes,
// sizes and leading dimensions are right without a GPU. Non-square shapes, so a swapped operand fails.
#include <catch2/catch.hpp>

#include "train/cpu/matmul.hpp"
#include "host_gemm.hpp"
#include "train/cuda/gemm_plan.hpp"

#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

using gpudirect::testing::host_gemm;

namespace {

using HostOperands = Operands<float>;

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

void require_close(const std::vector<float>& want, const std::vector<float>& got) {
  REQUIRE(want.size() == got.size());
  for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == Approx(want[i]).margin(1e-4));
}

}  // namespace

TEST_CASE("gemm plans: forward, dinp, dweight and dbias equal the CPU layer", "[train][cuda]") {
  const int N = 7, IC = 5, OC = 3;
  std::mt19937 rng(5);
  const auto inp = random_vector(static_cast<std::size_t>(N) * IC, rng);
  const auto weight = random_vector(static_cast<std::size_t>(OC) * IC, rng);
  const auto bias = random_vector(OC, rng);
  const auto dout = random_vector(static_cast<std::size_t>(N) * OC, rng);
  const std::vector<float> ones(N, 1.0f);
  const HostOperands operands{inp.data(), weight.data(), dout.data(), ones.data()};

  // Forward with a bias: out starts as the bias rows, the product accumulates onto it.
  std::vector<float> want(static_cast<std::size_t>(N) * OC), got(want.size());
  cpu::matmul_forward(want.data(), inp.data(), weight.data(), bias.data(), N, IC, OC, 1);
  for (std::size_t i = 0; i < got.size(); ++i) got[i] = bias[i % OC];
  host_gemm(forward_plan(N, IC, OC, true), operands, got.data());
  require_close(want, got);
  // Without a bias (the tied head): beta 0 ignores what was in out.
  cpu::matmul_forward(want.data(), inp.data(), weight.data(), nullptr, N, IC, OC, 1);
  std::fill(got.begin(), got.end(), 123.0f);
  host_gemm(forward_plan(N, IC, OC, false), operands, got.data());
  require_close(want, got);

  // Backward: the CPU adds into zeroed dinp; the plan overwrites it. Weight and bias gradients accumulate.
  const auto start_dweight = random_vector(static_cast<std::size_t>(OC) * IC, rng);
  const auto start_dbias = random_vector(OC, rng);
  std::vector<float> want_dinp(static_cast<std::size_t>(N) * IC, 0.0f), want_dweight = start_dweight, want_dbias = start_dbias;
  cpu::matmul_backward(want_dinp.data(), want_dweight.data(), want_dbias.data(), dout.data(), inp.data(), weight.data(), N, IC, OC, 1);
  std::vector<float> got_dinp(want_dinp.size(), -7.0f), got_dweight = start_dweight, got_dbias = start_dbias;
  host_gemm(dinp_plan(N, IC, OC), operands, got_dinp.data());
  host_gemm(dweight_plan(N, IC, OC), operands, got_dweight.data());
  host_gemm(dbias_plan(N, OC), operands, got_dbias.data());
  require_close(want_dinp, got_dinp);
  require_close(want_dweight, got_dweight);
  require_close(want_dbias, got_dbias);
}

TEST_CASE("gemm plans: leading dimensions fit cuBLAS's rules", "[train][cuda]") {
  // lda >= rows of A as stored (m, or k when transposed), likewise ldb, ldc >= m.
  for (const GemmPlan& p :
       {forward_plan(8192, 768, 2304, true), dinp_plan(8192, 768, 50257), dweight_plan(8192, 3072, 768), dbias_plan(8192, 768)}) {
    CHECK(p.lda >= (p.transpose_a ? p.k : p.m));
    CHECK(p.ldb >= (p.transpose_b ? p.n : p.k));
    CHECK(p.ldc >= p.m);
  }
}
