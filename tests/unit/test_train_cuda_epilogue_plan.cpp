// `train --gemm-epilogues` (epilogue_plan.hpp, matmul_epilogue.cu): the bias and the MLP's GELU in
// cuBLASLt's GEMM epilogues. The plans run here through a host column-major gemm with cuBLAS's
// semantics followed by the epilogues as cuBLASLt documents them (cublasLt.h: the bias added to every
// column of D; GELU_AUX_BIAS writes the GELU's input to the aux matrix and its GELU to D; DGELU
// multiplies the product by the GELU's gradient at the aux input), against the CPU layers: which
// operand, which bias, which leading dimension of the aux matrix. Non-square shapes, so a swap fails.
#include <catch2/catch.hpp>

#include "host_gemm.hpp"
#include "train/cpu/gelu.hpp"
#include "train/cpu/matmul.hpp"
#include "train/cuda/epilogue_plan.hpp"
#include "train/cuda/memory_plan.hpp"
#include "train/train_options.hpp"

#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

using gpudirect::testing::host_gemm;

namespace {

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

float gelu(float x) {
  float y = 0;
  cpu::gelu_forward(&y, &x, 1, 1);
  return y;
}

float gelu_gradient(float x) {
  float g = 0;
  const float one = 1.0f;
  cpu::gelu_backward(&g, &x, &one, 1, 1);
  return g;
}

// cublasLtMatmul with the plan's epilogue, alpha 1 and beta 0, on the host.
void host_epilogue_gemm(const EpiloguePlan& plan, const Operands<float>& operands, const float* bias, float* aux, float* d) {
  const GemmPlan& p = plan.gemm;
  host_gemm(p, operands, d);
  for (int j = 0; j < p.n; ++j)
    for (int i = 0; i < p.m; ++i) {
      float& out = d[i + static_cast<std::size_t>(j) * p.ldc];
      const std::size_t a = i + static_cast<std::size_t>(j) * plan.aux_ld;
      switch (plan.epilogue) {
        case Epilogue::bias:
          out += bias[i];
          break;
        case Epilogue::gelu_bias:
          aux[a] = out + bias[i];
          out = gelu(aux[a]);
          break;
        case Epilogue::dgelu:
          out *= gelu_gradient(aux[a]);
          break;
      }
    }
}

void require_close(const std::vector<float>& want, const std::vector<float>& got) {
  REQUIRE(want.size() == got.size());
  for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == Approx(want[i]).margin(1e-4));
}

}  // namespace

TEST_CASE("gemm epilogues: bias, GELU+bias and GELU-gradient products equal the CPU layers", "[train][cuda]") {
  // The MLP of a block at width 8: fc 8 -> 32, GELU, fcproj 32 -> 8; 6 tokens.
  const int N = 6, C = 8, H = 4 * C;
  std::mt19937 rng(11);
  const auto x = random_vector(static_cast<std::size_t>(N) * C, rng);
  const auto fc_w = random_vector(static_cast<std::size_t>(H) * C, rng), fc_b = random_vector(H, rng);
  const auto proj_w = random_vector(static_cast<std::size_t>(C) * H, rng), proj_b = random_vector(C, rng);
  const auto dout = random_vector(static_cast<std::size_t>(N) * C, rng);

  // Forward through the CPU layers: pre = x fc_w^T + fc_b, h = gelu(pre), out = h proj_w^T + proj_b.
  std::vector<float> pre(static_cast<std::size_t>(N) * H), h(pre.size()), out(static_cast<std::size_t>(N) * C);
  cpu::matmul_forward(pre.data(), x.data(), fc_w.data(), fc_b.data(), N, C, H, 1);
  cpu::gelu_forward(h.data(), pre.data(), h.size(), 1);
  cpu::matmul_forward(out.data(), h.data(), proj_w.data(), proj_b.data(), N, H, C, 1);

  SECTION("GELU+bias: the GELU's input into aux, its GELU into D") {
    const EpiloguePlan plan = gelu_epilogue_plan(N, C, H);
    REQUIRE(epilogue_problem(plan).empty());
    std::vector<float> got_pre(pre.size(), -9.0f), got_h(h.size(), 7.0f);
    host_epilogue_gemm(plan, Operands<float>{x.data(), fc_w.data(), nullptr, nullptr}, fc_b.data(), got_pre.data(), got_h.data());
    require_close(pre, got_pre);
    require_close(h, got_h);
  }
  SECTION("bias: D is the product plus the bias, whatever D held") {
    const EpiloguePlan plan = bias_epilogue_plan(N, H, C);
    REQUIRE(epilogue_problem(plan).empty());
    std::vector<float> got(out.size(), 123.0f);
    host_epilogue_gemm(plan, Operands<float>{h.data(), proj_w.data(), nullptr, nullptr}, proj_b.data(), nullptr, got.data());
    require_close(out, got);
  }
  SECTION("GELU-gradient: the projection's input gradient through the GELU, read at its kept input") {
    std::vector<float> dh(h.size(), 0.0f), dpre(pre.size(), 0.0f), dproj_w(proj_w.size(), 0.0f), dproj_b(proj_b.size(), 0.0f);
    cpu::matmul_backward(dh.data(), dproj_w.data(), dproj_b.data(), dout.data(), h.data(), proj_w.data(), N, H, C, 1);
    cpu::gelu_backward(dpre.data(), pre.data(), dh.data(), dpre.size(), 1);
    const EpiloguePlan plan = dgelu_epilogue_plan(N, H, C);
    REQUIRE(epilogue_problem(plan).empty());
    std::vector<float> aux = pre, got(dpre.size(), 5.0f);
    host_epilogue_gemm(plan, Operands<float>{nullptr, proj_w.data(), dout.data(), nullptr}, nullptr, aux.data(), got.data());
    require_close(dpre, got);
    CHECK(aux == pre);  // read, not written
  }
}

TEST_CASE("gemm epilogues: plans cuBLASLt would refuse are named before a GPU sees them", "[train][cuda]") {
  CHECK(epilogue_problem(bias_epilogue_plan(8192, 768, 2304)).empty());
  CHECK(epilogue_problem(gelu_epilogue_plan(8192, 768, 3072)).empty());
  CHECK(epilogue_problem(dgelu_epilogue_plan(8192, 3072, 768)).empty());
  CHECK_THAT(epilogue_problem(gelu_epilogue_plan(6, 5, 12)), Catch::Contains("leading dimension 12 is not a multiple of 8"));
  EpiloguePlan short_aux = dgelu_epilogue_plan(6, 32, 8);
  short_aux.aux_ld = 16;
  CHECK_THAT(epilogue_problem(short_aux), Catch::Contains("less than D's rows 32"));
  EpiloguePlan wrong_bias = bias_epilogue_plan(6, 8, 24);
  wrong_bias.bias_length = 8;
  CHECK_THAT(epilogue_problem(wrong_bias), Catch::Contains("the bias has 8 entries and D has 24 rows"));
  EpiloguePlan accumulating = bias_epilogue_plan(6, 8, 24);
  accumulating.gemm.beta = 1;
  CHECK_THAT(epilogue_problem(accumulating), Catch::Contains("beta 0"));

  for (const char* preset : {"tiny", "gpt2-124m", "gpt3-5b"}) CHECK(gemm_epilogues_problem(preset_config(preset)).empty());
  GptConfig odd = preset_config("tiny");
  odd.width = 36;
  odd.heads = 3;
  CHECK_THAT(gemm_epilogues_problem(odd), Catch::Contains("a multiple of 8") && Catch::Contains("this model's is 36") &&
                                              Catch::Contains("run without --gemm-epilogues"));
}

TEST_CASE("gemm epilogues: the memory plan drops the GELU-gradient buffer and counts cuBLASLt's workspace", "[train][cuda][command]") {
  SpeedOptions speed;
  speed.gemm_epilogues = true;
  CHECK(speed_names(speed) == "gemm-epilogues");
  GptConfig config = preset_config("gpt2-124m");
  config.micro_batch = 4;
  const ModelBufferSizes off = model_buffer_sizes(config), on = model_buffer_sizes(config, AttentionKind::reference, speed);
  const std::uint64_t btc = 4ull * 1024 * 768;
  CHECK(off.dfch_gelu == 4 * btc);
  CHECK(on.dfch_gelu == 0);
  CHECK(on.fch == off.fch);
  CHECK(on.fch_gelu == off.fch_gelu);
  CHECK(on.gemm_workspace_bytes == kGemmEpilogueWorkspaceBytes);
  const TrainSettings settings;
  const MemoryPlan a = plan_memory(config, settings, 1), b = plan_memory(config, settings, 1, AttentionKind::reference, speed);
  CHECK(a.activations - b.activations == 2 * 4 * btc);
  CHECK(b.other - a.other == kGemmEpilogueWorkspaceBytes);

  using namespace gpudirect::launcher::train_command;
  TrainOptions o;
  o.speed.gemm_epilogues = true;
  CHECK(speed_for(o, true, "").gemm_epilogues);
  CHECK_THROWS_WITH(speed_for(o, false, ""), Catch::Contains("--gemm-epilogues is a switch of the CUDA model"));
}
