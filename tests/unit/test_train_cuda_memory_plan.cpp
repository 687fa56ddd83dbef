// The CUDA memory plan: counted from the shapes, by the backend's own ZeRO-1 rule; refuses what
// cannot fit, naming the numbers.
#include <catch2/catch.hpp>

#include "train/cuda/memory_plan.hpp"
#include "train/model.hpp"

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;
using Catch::Contains;

namespace {
constexpr std::uint64_t GiB = 1ull << 30;

GptConfig shape(const char* preset, int micro_batch) {
  GptConfig config = preset_config(preset);
  config.micro_batch = micro_batch;
  return config;
}

TrainSettings with_zero1(bool zero1) {
  TrainSettings settings;
  settings.zero1 = zero1;
  return settings;
}
}  // namespace

TEST_CASE("memory plan: model state is 6 bytes of weights, 4 of gradients and 8 of AdamW per parameter", "[train][cuda]") {
  const GptConfig config = shape("gpt2-124m", 8);
  const std::uint64_t P = ParameterLayout(config).total();
  REQUIRE(P == 124439808);
  const MemoryPlan plan = plan_memory(config, with_zero1(false), 8);
  CHECK(plan.weights == 6 * P);
  CHECK(plan.gradients == 4 * P);
  CHECK(plan.optimizer == 8 * P);
  CHECK(plan.zero1_staging == 0);
  CHECK(plan.logits == 6ull * 8 * 1024 * 50257);  // fp32 logits + bf16 dlogits, B x T x V
}

TEST_CASE("memory plan: activations grow with the micro-batch, the model state does not", "[train][cuda]") {
  const MemoryPlan one = plan_memory(shape("gpt2-124m", 1), with_zero1(false), 1);
  const MemoryPlan four = plan_memory(shape("gpt2-124m", 4), with_zero1(false), 1);
  CHECK(four.weights == one.weights);
  CHECK(four.optimizer == one.optimizer);
  CHECK(four.activations == 4 * one.activations);
  CHECK(four.logits == 4 * one.logits);
}

TEST_CASE("memory plan: ZeRO-1 keeps 1/N of the moments plus one padded bucket of staging", "[train][cuda]") {
  const GptConfig config = shape("gpt3-5b", 1);
  const std::uint64_t P = ParameterLayout(config).total();
  const MemoryPlan plan = plan_memory(config, with_zero1(true), 16);
  CHECK(plan.optimizer >= 8 * P / 16);
  CHECK(plan.optimizer <= 8 * P / 16 + 8ull * 16 * 64);  // at most a chunk's padding per bucket more
  // The largest bucket (25 MiB of fp32 unless one tensor is larger: gpt3-5b's token embedding,
  // 50257 x 4096), padded to a multiple of 16.
  const std::uint64_t largest = 50257ull * 4096;
  CHECK(plan.zero1_staging >= 4 * largest);
  CHECK(plan.zero1_staging < 4 * (largest + 16));
  // One rank shards nothing unless forced.
  CHECK(plan_memory(config, with_zero1(true), 1).optimizer == 8 * P);
  TrainSettings forced = with_zero1(true);
  forced.zero1_at_one_rank = true;
  CHECK(plan_memory(config, forced, 1).zero1_staging >= 4 * largest);
}

TEST_CASE("memory plan: gpt3-5b fits an 80 GB H100 with ZeRO-1 over 16 GPUs at micro-batch 1 and 2, not replicated", "[train][cuda]") {
  const std::uint64_t h100 = 79 * GiB;  // what cudaMemGetInfo reports free on an idle 80 GB H100, about
  for (int micro_batch : {1, 2}) {
    const GptConfig config = shape("gpt3-5b", micro_batch);
    INFO(describe(plan_memory(config, with_zero1(true), 16)));
    CHECK(does_not_fit(plan_memory(config, with_zero1(true), 16), h100, config, true).empty());
  }
  const GptConfig config = shape("gpt3-5b", 4);
  const MemoryPlan replicated = plan_memory(config, with_zero1(false), 16);
  const std::string why = does_not_fit(replicated, h100, config, false);
  INFO(describe(replicated));
  CHECK_THAT(why, Contains("GiB per GPU") && Contains("79.00 GiB free") && Contains("micro-batch 4") && Contains("--zero1"));
}

TEST_CASE("memory plan: the description names every part and the total", "[train][cuda]") {
  const std::string text = describe(plan_memory(shape("tiny", 4), with_zero1(false), 1));
  for (const char* part : {"weights", "gradients", "AdamW moments", "ZeRO-1 staging", "activations", "logits", "total"})
    CHECK_THAT(text, Contains(part));
}

TEST_CASE("memory plan: the tensor-core attention counts its B x NH x T x T scores and the reference none", "[train][cuda]") {
  const GptConfig config = shape("gpt2-124m", 16);
  const std::uint64_t L = 12, B = 16, NH = 12, T = 1024, C = 768;
  const std::uint64_t scores = B * NH * T * T;
  const MemoryPlan reference = plan_memory(config, with_zero1(false), 1);
  const MemoryPlan tensor_core = plan_memory(config, with_zero1(false), 1, AttentionKind::tensor_core);
  CHECK(reference.scores == 0);
  // bf16 probabilities of every layer, the fp32 score scratch (forward's scores, backward's dprobs),
  // the bf16 dscores.
  CHECK(tensor_core.scores == 2 * L * scores + 4 * scores + 2 * scores);
  // Activations: the head-major copies (q|k|v, dq|dk|dv, out or dout: 7 x B*T*C bf16) in place of
  // the reference's log-sum-exp per layer and its delta scratch (fp32 per row).
  const std::uint64_t rows = B * NH * T;
  CHECK(tensor_core.activations + 4 * (L * rows + rows) == reference.activations + 2 * 7 * B * T * C);
  CHECK(tensor_core.weights == reference.weights);
  CHECK(tensor_core.logits == reference.logits);
  CHECK(tensor_core.total() > reference.total());
  // The allocation follows the same counts.
  const ModelBufferSizes n = model_buffer_sizes(config, AttentionKind::tensor_core);
  CHECK(n.probs == L * scores);
  CHECK(n.lse == 0);
  CHECK(model_buffer_sizes(config).probs == 0);
  CHECK_THAT(describe(tensor_core), Contains("attention scores 5.62,"));
  // What an 80 GB H100 has free: micro-batch 16 fits either way; at 96 the scores alone (33.8 GiB)
  // make the difference, and the refusal names them.
  CHECK(does_not_fit(tensor_core, 79 * GiB, config, false).empty());
  const GptConfig large = shape("gpt2-124m", 96);
  CHECK(does_not_fit(plan_memory(large, with_zero1(false), 1), 79 * GiB, large, false).empty());
  const std::string why = does_not_fit(plan_memory(large, with_zero1(false), 1, AttentionKind::tensor_core), 79 * GiB, large, false);
  CHECK_THAT(why, Contains("activations, attention scores and logits take") && Contains("micro-batch 96"));
}
