// `train --fused-classifier` (fused_classifier.hpp, cross_entropy.cu): bf16 logits, and one kernel per
// row for the loss and the gradients in place. Here the kernel runs on the host block by block and
// thread by thread through the header it uses (each thread's columns, its online statistics, the
// block's max and its warp-butterfly-then-warps sum, the in-place writes), on rows padded with NaN;
// it must agree with today's path (softmax_cross_entropy_kernel on the fp32 logits) within the bound
// that rounding the logits to bf16 allows, and with a double-precision softmax of its own inputs.
#include <catch2/catch.hpp>

#include "train/cuda/bf16.hpp"
#include "train/cuda/fused_classifier.hpp"
#include "train/cuda/launch_geometry.hpp"
#include "train/cuda/memory_plan.hpp"
#include "train/model.hpp"
#include "train/train_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

namespace {

// block_sum of reductions.cuh: a xor butterfly within each warp, then the warps' sums in order.
float block_sum_as_device(std::vector<float> v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    std::vector<float> next(v.size());
    for (std::size_t t = 0; t < v.size(); ++t) next[t] = v[t] + v[(t / kWarpSize) * kWarpSize + ((t % kWarpSize) ^ offset)];
    v = next;
  }
  float total = 0.0f;
  for (std::size_t w = 0; w < v.size() / kWarpSize; ++w) total += v[w * kWarpSize];
  return total;
}

// fused_classifier_kernel on row `row` of bf16 logits held as floats (rows `stride` apart), in place.
float fused_row(std::vector<float>& logits, std::size_t row, int V, int stride, int target, float dloss) {
  float* x = logits.data() + row * static_cast<std::size_t>(stride);
  const float target_logit = x[target];  // thread 0, before the barriers
  std::vector<SoftmaxStats> stats(kThreadsPerBlock);
  for (int t = 0; t < kThreadsPerBlock; ++t)
    for (int i = t; i < V; i += kThreadsPerBlock)
      stats[static_cast<std::size_t>(t)] = softmax_add(stats[static_cast<std::size_t>(t)], x[i]);
  float max = -INFINITY;
  for (const SoftmaxStats& s : stats) max = std::fmax(max, s.max);
  std::vector<float> rescaled(kThreadsPerBlock);
  for (int t = 0; t < kThreadsPerBlock; ++t)
    rescaled[static_cast<std::size_t>(t)] = softmax_rescaled_sum(stats[static_cast<std::size_t>(t)], max);
  const float sum = block_sum_as_device(rescaled);
  const float loss = classifier_loss(max, sum, target_logit);
  const float inv = 1.0f / sum;
  for (int t = 0; t < kThreadsPerBlock; ++t)
    for (int i = t; i < V; i += kThreadsPerBlock) x[i] = round_to_bf16(classifier_dlogit(x[i], max, inv, dloss, i == target));
  return loss;
}

}  // namespace

TEST_CASE("fused classifier: agrees with today's path on fp32 logits, in place, padded columns untouched", "[train][cuda]") {
  std::mt19937 rng(34);
  for (const auto& [V, stride] :
       {std::pair{1, 1}, std::pair{7, 128}, std::pair{300, 300}, std::pair{1000, 1024}, std::pair{50257, 50304}}) {
    INFO("V " << V << ", stride " << stride);
    const std::size_t rows = 3;
    std::normal_distribution<float> logit(0.0f, 3.0f);
    std::vector<float> fp32(rows * static_cast<std::size_t>(stride), std::nanf("")), bf(fp32.size(), std::nanf(""));
    for (std::size_t r = 0; r < rows; ++r)
      for (int i = 0; i < V; ++i) {
        const std::size_t at = r * static_cast<std::size_t>(stride) + static_cast<std::size_t>(i);
        fp32[at] = logit(rng);
        bf[at] = round_to_bf16(fp32[at]);  // the head's GEMM writes bf16 instead of fp32
      }
    const float dloss = 1.0f / 96.0f;
    for (std::size_t r = 0; r < rows; ++r) {
      const int target = static_cast<int>((r * 7919) % static_cast<std::size_t>(V));
      const float* x = fp32.data() + r * static_cast<std::size_t>(stride);
      const std::vector<float> bf_row(bf.begin() + static_cast<long>(r * static_cast<std::size_t>(stride)),
                                      bf.begin() + static_cast<long>(r * static_cast<std::size_t>(stride) + static_cast<std::size_t>(V)));
      // Today's path in double on the fp32 logits, and the fused one's own inputs in double.
      double m = -INFINITY, mb = -INFINITY, s = 0, sb = 0, delta = 0;
      for (int i = 0; i < V; ++i) {
        m = std::max(m, static_cast<double>(x[i]));
        mb = std::max(mb, static_cast<double>(bf_row[static_cast<std::size_t>(i)]));
        delta = std::max(delta, std::abs(static_cast<double>(x[i]) - bf_row[static_cast<std::size_t>(i)]));
      }
      for (int i = 0; i < V; ++i) {
        s += std::exp(x[i] - m);
        sb += std::exp(bf_row[static_cast<std::size_t>(i)] - mb);
      }
      const double want = std::log(s) + m - x[target], own = std::log(sb) + mb - bf_row[static_cast<std::size_t>(target)];
      const float loss = fused_row(bf, r, V, stride, target, dloss);
      CHECK(std::abs(loss - own) <= 1e-5 * (1 + std::abs(own)));
      // log-sum-exp and the target's logit each move by at most the largest rounding of a logit.
      CHECK(std::abs(loss - want) <= 2 * delta + 1e-5 * (1 + std::abs(want)));
      for (int i = 0; i < V; ++i) {
        const double p = std::exp(x[i] - m) / s, g = dloss * (p - (i == target ? 1.0 : 0.0));
        const float got = bf[r * static_cast<std::size_t>(stride) + static_cast<std::size_t>(i)];
        CHECK(got == round_to_bf16(got));  // a bf16 value, written in place
        // A probability moves by a factor of at most exp(2 delta); then the bf16 rounding of the gradient.
        CHECK(std::abs(got - g) <= std::abs(dloss) * p * (std::exp(2 * delta) - 1) + std::abs(g) / 128 + 1e-9);
      }
      for (int i = V; i < stride; ++i) CHECK(std::isnan(bf[r * static_cast<std::size_t>(stride) + static_cast<std::size_t>(i)]));
    }
  }
}

TEST_CASE("fused classifier: online statistics equal the two-pass ones", "[train][cuda]") {
  SoftmaxStats s;
  for (const float x : {1.0f, 3.0f, -2.0f, 3.0f, 0.5f}) s = softmax_add(s, x);
  CHECK(s.max == 3.0f);
  const double want = std::exp(-2.0) + 1 + std::exp(-5.0) + 1 + std::exp(-2.5);
  CHECK(std::abs(s.sum - want) <= 1e-6 * want);
  CHECK(softmax_rescaled_sum(SoftmaxStats{}, 3.0f) == 0.0f);  // a thread without columns adds nothing
  CHECK(std::abs(softmax_rescaled_sum(s, 4.0f) - want * std::exp(-1.0)) <= 1e-6 * want);
}

TEST_CASE("fused classifier: no fp32 logits in the memory plan, and a switch of the CUDA model only", "[train][cuda][command]") {
  SpeedOptions speed;
  speed.fused_classifier = true;
  CHECK(speed_names(speed) == "fused-classifier");
  GptConfig config = preset_config("gpt2-124m");
  config.micro_batch = 4;
  const ModelBufferSizes off = model_buffer_sizes(config), on = model_buffer_sizes(config, AttentionKind::reference, speed);
  CHECK(off.logits == 4 * 1024 * 50257ull);
  CHECK(on.logits == 0);
  CHECK(on.dlogits == off.dlogits);
  const TrainSettings settings;
  const MemoryPlan a = plan_memory(config, settings, 1), b = plan_memory(config, settings, 1, AttentionKind::reference, speed);
  CHECK(a.logits - b.logits == 4ull * 4 * 1024 * 50257);
  using namespace gpudirect::launcher::train_command;
  TrainOptions o;
  o.speed.fused_classifier = true;
  CHECK(speed_for(o, true, "").fused_classifier);
  CHECK_THROWS_WITH(speed_for(o, false, ""), Catch::Contains("--fused-classifier is a switch of the CUDA model"));
}
