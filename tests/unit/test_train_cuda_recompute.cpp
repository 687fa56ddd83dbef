// `train --recompute` (speed_options.hpp, gpt_cuda.cu): each block's input stays (encoded_ and res3_
// of every layer), its activations take one slot that every layer reuses, and backward runs the
// block's forward again before its backward. Here: the sizes and the memory plan, and the schedule of
// gpt_cuda.cu on a toy residual network whose buffers are sized and indexed exactly as the model's
// (saved_layers, activation_slot): the gradients with and without recompute must be equal.
#include <catch2/catch.hpp>

#include "train/cuda/memory_plan.hpp"
#include "train/cuda/speed_options.hpp"
#include "train/model.hpp"

#include <cmath>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

namespace {

SpeedOptions recompute() {
  SpeedOptions speed;
  speed.recompute = true;
  return speed;
}

// A residual network of L blocks over a vector of n: block l is y = x + w_l * tanh(x); the activation
// it keeps for backward is a = tanh(x). forward/backward as run_forward/block_forward/run_backward:
// inputs kept per layer, activations in slot activation_slot(l), recomputed first under --recompute.
struct Toy {
  int L, n;
  SpeedOptions speed;
  bool skip_recompute = false;          // for the test that the schedule matters
  std::vector<double> w, inputs, acts;  // inputs: L + 1 vectors (the last is the output)
  Toy(int layers, int width, const SpeedOptions& s) : L(layers), n(width), speed(s), w(static_cast<std::size_t>(layers)) {
    for (int l = 0; l < L; ++l) w[static_cast<std::size_t>(l)] = 0.3 + 0.1 * l;
    inputs.assign(static_cast<std::size_t>(L + 1) * n, 0.0);
    acts.assign(saved_layers(L, speed) * static_cast<std::size_t>(n), 0.0);
  }
  void block_forward(int l, bool recomputing) {
    const std::size_t S = activation_slot(l, speed);
    for (int i = 0; i < n; ++i) {
      const double x = inputs.at(static_cast<std::size_t>(l) * n + i);
      const double a = std::tanh(x);
      acts.at(S * n + i) = a;
      if (!recomputing) inputs.at(static_cast<std::size_t>(l + 1) * n + i) = x + w[static_cast<std::size_t>(l)] * a;
    }
  }
  // Returns dloss/dinput for loss = sum(output); dw receives each block's weight gradient.
  std::vector<double> run(const std::vector<double>& x, std::vector<double>& dw) {
    std::copy(x.begin(), x.end(), inputs.begin());
    for (int l = 0; l < L; ++l) block_forward(l, false);
    std::vector<double> d(static_cast<std::size_t>(n), 1.0);
    dw.assign(static_cast<std::size_t>(L), 0.0);
    for (int l = L - 1; l >= 0; --l) {
      if (speed.recompute && !skip_recompute) block_forward(l, true);
      const std::size_t S = activation_slot(l, speed);
      for (int i = 0; i < n; ++i) {
        const double a = acts.at(S * n + i);
        dw[static_cast<std::size_t>(l)] += d[static_cast<std::size_t>(i)] * a;
        d[static_cast<std::size_t>(i)] *= 1.0 + w[static_cast<std::size_t>(l)] * (1.0 - a * a);
      }
    }
    return d;
  }
};

}  // namespace

TEST_CASE("recompute: one slot of block activations, every layer's input kept", "[train][cuda]") {
  const SpeedOptions off;
  CHECK(saved_layers(12, off) == 12);
  CHECK(saved_layers(12, recompute()) == 1);
  CHECK(activation_slot(7, off) == 7);
  CHECK(activation_slot(7, recompute()) == 0);
  CHECK(speed_names(recompute()) == "recompute");

  GptConfig config = preset_config("gpt2-124m");
  config.micro_batch = 4;
  for (const AttentionKind attention : {AttentionKind::reference, AttentionKind::tensor_core}) {
    const ModelBufferSizes all = model_buffer_sizes(config, attention), one = model_buffer_sizes(config, attention, recompute());
    CHECK(one.res3 == all.res3);  // the block inputs
    CHECK(one.encoded == all.encoded);
    CHECK(one.lnf == all.lnf);
    for (const auto& [kept, per_layer] :
         {std::pair{one.res2, all.res2}, std::pair{one.ln1, all.ln1}, std::pair{one.qkv, all.qkv}, std::pair{one.atty, all.atty},
          std::pair{one.ln2, all.ln2}, std::pair{one.fch, all.fch}, std::pair{one.fch_gelu, all.fch_gelu},
          std::pair{one.ln1_mean, all.ln1_mean}, std::pair{one.ln2_rstd, all.ln2_rstd}, std::pair{one.lse, all.lse},
          std::pair{one.probs, all.probs}})
      CHECK(kept * 12 == per_layer);
  }
}

TEST_CASE("recompute: the memory plan saves L-1 layers of block activations, nothing else", "[train][cuda]") {
  GptConfig config = preset_config("gpt2-124m");
  config.micro_batch = 16;
  const TrainSettings settings;
  const std::uint64_t BT = 16ull * 1024, BTC = BT * 768, rows = BT * 12;
  // Per layer: fp32 res2 and four layer-norm statistics, the log-sum-exp of each attention row; bf16
  // ln1, atty, ln2 (C each), qkv (3C), fch and fch_gelu (4C each).
  const std::uint64_t per_layer = 4 * (BTC + 4 * BT + rows) + 2 * 14 * BTC;
  const MemoryPlan all = plan_memory(config, settings, 1), one = plan_memory(config, settings, 1, AttentionKind::reference, recompute());
  CHECK(all.activations - one.activations == 11 * per_layer);
  CHECK(one.weights == all.weights);
  CHECK(one.logits == all.logits);
  CHECK(one.scores == all.scores);
  // The tensor-core attention's probabilities are per layer too: one layer's under --recompute.
  const MemoryPlan tc = plan_memory(config, settings, 1, AttentionKind::tensor_core),
                   tc_one = plan_memory(config, settings, 1, AttentionKind::tensor_core, recompute());
  CHECK(tc.scores - tc_one.scores == 11ull * 2 * rows * 1024);
}

TEST_CASE("recompute: the schedule with one slot gives the gradients of the schedule with L", "[train][cuda]") {
  const int L = 5, n = 7;
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = 0.4 * i - 1.1;
  Toy kept(L, n, SpeedOptions{}), recomputed(L, n, recompute());
  REQUIRE(recomputed.acts.size() == static_cast<std::size_t>(n));  // one slot
  std::vector<double> dw_kept, dw_recomputed;
  const std::vector<double> dx_kept = kept.run(x, dw_kept), dx_recomputed = recomputed.run(x, dw_recomputed);
  CHECK(dx_recomputed == dx_kept);
  CHECK(dw_recomputed == dw_kept);
  // Skipping the recomputation leaves the last block's activations in the slot for every layer: the
  // gradients then differ, so the comparison above can tell.
  Toy stale(L, n, recompute());
  stale.skip_recompute = true;
  std::vector<double> dw_stale;
  stale.run(x, dw_stale);
  CHECK(dw_stale != dw_kept);
}
