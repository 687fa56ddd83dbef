// `train --pad-vocab` (speed_options.hpp): the logits and dlogits rows padded to a multiple of 128
// columns. The head's three cuBLAS plans (gemm_plan.hpp, with the padded stride) and the classifier's
// row indexing (cross_entropy.cu, emulated here as it indexes) run on the host with NaN in every
// padded column: the loss, dlnf and dwte must equal the unpadded run's exactly and the CPU layers'
// closely, so the padded columns can affect neither. The memory plan counts the padded rows.
#include <catch2/catch.hpp>

#include "train/cpu/cross_entropy.hpp"
#include "train/cpu/matmul.hpp"
#include "host_gemm.hpp"
#include "train/cuda/gemm_plan.hpp"
#include "train/cuda/memory_plan.hpp"
#include "train/cuda/speed_options.hpp"
#include "train/model.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

using gpudirect::testing::host_gemm;

namespace {

// softmax_cross_entropy_kernel, one row at a time, indexing as the kernel does (row n at n * stride,
// columns 0..V-1); dlogits in fp32 here.
void classifier_as_kernel(std::vector<float>& losses, std::vector<float>& dlogits, const std::vector<float>& logits,
                          const std::vector<std::int32_t>& targets, float dloss, int N, int V, int stride) {
  for (int n = 0; n < N; ++n) {
    const std::size_t at = static_cast<std::size_t>(n) * stride;
    float max = -INFINITY;
    for (int i = 0; i < V; ++i) max = std::fmax(max, logits[at + i]);
    double sum = 0;
    for (int i = 0; i < V; ++i) sum += std::exp(static_cast<double>(logits[at + i]) - max);
    losses[n] = static_cast<float>(std::log(sum) + max - logits[at + targets[n]]);
    for (int i = 0; i < V; ++i)
      dlogits[at + i] = static_cast<float>(dloss * (std::exp(static_cast<double>(logits[at + i]) - max) / sum - (i == targets[n] ? 1 : 0)));
  }
}

struct HeadResult {
  std::vector<float> losses, dlnf, dwte;
};

// The tied head as gpt_cuda.cu runs it: logits = lnf wte^T, the classifier, dlnf = dlogits wte,
// dwte += dlogits^T lnf; logits and dlogits rows `stride` apart, their padded columns NaN.
HeadResult run_head(const std::vector<float>& lnf, const std::vector<float>& wte, const std::vector<std::int32_t>& targets, int N, int C,
                    int V, int stride, float dloss) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> logits(static_cast<std::size_t>(N) * stride, nan), dlogits(logits.size(), nan);
  host_gemm(forward_plan(N, C, V, false, stride), Operands<float>{lnf.data(), wte.data(), nullptr, nullptr}, logits.data());
  for (int n = 0; n < N; ++n)
    for (int i = V; i < stride; ++i) REQUIRE(std::isnan(logits[static_cast<std::size_t>(n) * stride + i]));  // never written
  HeadResult r;
  r.losses.assign(static_cast<std::size_t>(N), 0.0f);
  classifier_as_kernel(r.losses, dlogits, logits, targets, dloss, N, V, stride);
  r.dlnf.assign(static_cast<std::size_t>(N) * C, -5.0f);
  r.dwte.assign(static_cast<std::size_t>(V) * C, 0.25f);
  const Operands<float> operands{lnf.data(), wte.data(), dlogits.data(), nullptr};
  host_gemm(dinp_plan(N, C, V, stride), operands, r.dlnf.data());
  host_gemm(dweight_plan(N, C, V, stride), operands, r.dwte.data());
  return r;
}

SpeedOptions padded_vocab() {
  SpeedOptions speed;
  speed.pad_vocab = true;
  return speed;
}

}  // namespace

TEST_CASE("padded vocabulary: the logits stride is V rounded up to 128 under --pad-vocab, V otherwise", "[train][cuda]") {
  const SpeedOptions off, on = padded_vocab();
  CHECK(logits_stride(50257, off) == 50257);
  CHECK(logits_stride(50257, on) == 50304);
  CHECK(logits_stride(512, on) == 512);
  CHECK(logits_stride(513, on) == 640);
  CHECK(logits_stride(1, on) == 128);
  CHECK(logits_stride(50304, on) % kVocabPadding == 0);
  CHECK(speed_names(off) == "none");
  CHECK(speed_names(on) == "pad-vocab");
}

TEST_CASE("padded vocabulary: NaN in the padded columns changes neither the loss nor dlnf nor dwte", "[train][cuda]") {
  const int N = 6, C = 5, V = 11;  // V not a multiple of anything: padded to 128
  const int stride = static_cast<int>(logits_stride(V, padded_vocab()));
  REQUIRE(stride == 128);
  std::mt19937 rng(34);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> lnf(static_cast<std::size_t>(N) * C), wte(static_cast<std::size_t>(V) * C);
  for (auto& x : lnf) x = normal(rng);
  for (auto& x : wte) x = normal(rng);
  const std::vector<std::int32_t> targets{0, 10, 3, 3, 7, 1};
  const float dloss = 1.0f / N;

  const HeadResult plain = run_head(lnf, wte, targets, N, C, V, V, dloss);
  const HeadResult padded = run_head(lnf, wte, targets, N, C, V, stride, dloss);
  for (const auto* v : {&padded.losses, &padded.dlnf, &padded.dwte})
    for (const float x : *v) REQUIRE(std::isfinite(x));
  CHECK(padded.losses == plain.losses);
  CHECK(padded.dlnf == plain.dlnf);
  CHECK(padded.dwte == plain.dwte);

  // And the unpadded run is the CPU model's head (cpu/matmul.cpp, cpu/cross_entropy.cpp).
  std::vector<float> logits(static_cast<std::size_t>(N) * V), losses(N);
  cpu::matmul_forward(logits.data(), lnf.data(), wte.data(), nullptr, N, C, V, 1);
  cpu::softmax_cross_entropy_forward(losses.data(), logits.data(), logits.data(), targets.data(), N, V, 1);
  cpu::softmax_cross_entropy_backward(logits.data(), logits.data(), targets.data(), dloss, N, V, 1);
  std::vector<float> dlnf(static_cast<std::size_t>(N) * C, 0.0f), dwte(static_cast<std::size_t>(V) * C, 0.25f);
  cpu::matmul_backward(dlnf.data(), dwte.data(), nullptr, logits.data(), lnf.data(), wte.data(), N, C, V, 1);
  for (int n = 0; n < N; ++n) CHECK(plain.losses[n] == Approx(losses[n]).margin(1e-5));
  for (std::size_t i = 0; i < dlnf.size(); ++i) CHECK(plain.dlnf[i] == Approx(dlnf[i]).margin(1e-5));
  for (std::size_t i = 0; i < dwte.size(); ++i) CHECK(plain.dwte[i] == Approx(dwte[i]).margin(1e-5));
}

TEST_CASE("padded vocabulary: the memory plan counts the padded logits rows, nothing else changes", "[train][cuda]") {
  GptConfig config = preset_config("gpt2-124m");
  config.micro_batch = 16;
  const TrainSettings settings;
  const MemoryPlan plain = plan_memory(config, settings, 1);
  const MemoryPlan padded = plan_memory(config, settings, 1, AttentionKind::reference, padded_vocab());
  CHECK(plain.logits == 6ull * 16 * 1024 * 50257);   // fp32 logits + bf16 dlogits
  CHECK(padded.logits == 6ull * 16 * 1024 * 50304);  // rows of 50304
  CHECK(padded.total() - plain.total() == 6ull * 16 * 1024 * (50304 - 50257));
  const ModelBufferSizes n = model_buffer_sizes(config, AttentionKind::reference, padded_vocab());
  CHECK(n.logits == 16ull * 1024 * 50304);
  CHECK(n.dlogits == n.logits);
}
