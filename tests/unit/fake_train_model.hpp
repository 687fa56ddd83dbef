// A small Model for testing what trains a model (optimizer, data parallelism, checkpoints) without
// the GPT maths: loss = mean over tokens of 0.5 * (p[k] - x)^2 where k walks the parameters from the
// token ids and their positions in the sequence, so gradients depend on the batch, are deterministic,
// do not depend on how a batch is split between ranks, and are reported ready in the order the real
// model reports them (final norm, blocks L-1 .. 0, embeddings).
#pragma once

#include "train/model.hpp"

#include <vector>

namespace gpudirect::train::testing {

class FakeModel final : public Model {
 public:
  explicit FakeModel(const GptConfig& config)
      : config_(config), layout_(config), parameters_(layout_.total()), gradients_(layout_.total()) {
    initialize_parameters(config, parameters_, config.seed);
  }
  const GptConfig& config() const override { return config_; }
  const ParameterLayout& layout() const override { return layout_; }
  std::span<float> parameters() override { return parameters_; }
  std::span<float> gradients() override { return gradients_; }
  void zero_gradients() override { std::fill(gradients_.begin(), gradients_.end(), 0.0f); }

  float forward_backward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, float grad_scale,
                         const GradientReady& on_ready) override {
    const float loss = run(inputs, targets, grad_scale, true);
    if (on_ready) {
      const auto [fo, fc] = layout_.final_norm_range();
      on_ready(fo, fc);
      for (int l = config_.layers - 1; l >= 0; --l) {
        const auto [o, c] = layout_.layer_range(l);
        on_ready(o, c);
      }
      const auto [eo, ec] = layout_.embedding_range();
      on_ready(eo, ec);
    }
    return loss;
  }
  float forward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets) override {
    return run(inputs, targets, 0, false);
  }

 private:
  float run(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, float grad_scale, bool backward) {
    double loss = 0;
    const std::size_t n = inputs.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k =
          (static_cast<std::size_t>(inputs[i]) * 7919u + (i % static_cast<std::size_t>(config_.seq_len)) * 104729u) % parameters_.size();
      const float x = static_cast<float>(targets[i]) / static_cast<float>(config_.vocab);
      const float d = parameters_[k] - x;
      loss += 0.5 * d * d;
      if (backward) gradients_[k] += grad_scale * d / static_cast<float>(n);
    }
    return static_cast<float>(loss / static_cast<double>(n));
  }

  GptConfig config_;
  ParameterLayout layout_;
  std::vector<float> parameters_, gradients_;
};

}  // namespace gpudirect::train::testing
