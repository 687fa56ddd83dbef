// AdamW maths (against the formulas written out by hand), decay only on decayed tensors, the
// warmup + cosine schedule, and gradient clipping.
#include "train/optimizer.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace gpudirect::train;

namespace {
GptConfig tiny() { return preset_config("tiny"); }
}  // namespace

TEST_CASE("AdamW follows the update written out by hand for two steps", "[train][optimizer]") {
  const GptConfig config = tiny();
  const ParameterLayout layout(config);
  AdamWSettings settings;
  settings.beta1 = 0.9f;
  settings.beta2 = 0.95f;
  settings.epsilon = 1e-8f;
  settings.weight_decay = 0.1f;
  AdamW adamw(layout, {{0, layout.total()}}, settings);
  std::vector<float> p(layout.total()), g(layout.total());
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
    g[i] = 0.003f * static_cast<float>(i % 7) - 0.01f;
  }
  std::vector<float> expected = p, m(p.size(), 0), v(p.size(), 0);
  const float lr = 1e-3f;
  for (long t = 1; t <= 2; ++t) {
    for (const TensorSpan& tensor : layout.tensors()) {
      for (std::size_t i = tensor.offset; i < tensor.offset + tensor.count; ++i) {
        const double gi = g[i] * 0.5;  // grad_scale 0.5
        m[i] = static_cast<float>(0.9 * m[i] + 0.1 * gi);
        v[i] = static_cast<float>(0.95 * v[i] + 0.05 * gi * gi);
        const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.95, t));
        const double decay = tensor.weight_decay ? 0.1 : 0.0;
        expected[i] = static_cast<float>(expected[i] - lr * (mh / (std::sqrt(vh) + 1e-8) + decay * expected[i]));
      }
    }
    adamw.step(p, g, lr, 0.5f, t);
  }
  for (std::size_t i = 0; i < p.size(); ++i) REQUIRE(p[i] == Approx(expected[i]).margin(1e-7));
}

TEST_CASE("AdamW decays matrices and embeddings but not biases and norms", "[train][optimizer]") {
  const GptConfig config = tiny();
  const ParameterLayout layout(config);
  AdamW adamw(layout, {{0, layout.total()}}, AdamWSettings{});
  std::vector<float> p(layout.total(), 1.0f), g(layout.total(), 0.0f);
  adamw.step(p, g, 0.5f, 1.0f, 1);
  CHECK(p[layout.find("wte").offset] == Approx(1.0f - 0.5f * 0.1f));
  CHECK(p[layout.find("h.0.qkv.w").offset] == Approx(0.95f));
  CHECK(p[layout.find("h.0.qkv.b").offset] == 1.0f);
  CHECK(p[layout.find("h.1.ln2.w").offset] == 1.0f);
  CHECK(p[layout.find("lnf.b").offset] == 1.0f);
}

TEST_CASE("AdamW on segments updates only those elements and keeps state for them alone", "[train][optimizer]") {
  const GptConfig config = tiny();
  const ParameterLayout layout(config);
  const TensorSpan& qkv = layout.find("h.0.qkv.w");
  // A segment that straddles a decayed matrix and the undecayed bias after it.
  const Segment segment{qkv.offset + qkv.count - 10, 20};
  AdamW shard(layout, {segment}, AdamWSettings{});
  AdamW whole(layout, {{0, layout.total()}}, AdamWSettings{});
  CHECK(shard.state_size() == 20);
  std::vector<float> p(layout.total(), 0.5f), g(layout.total(), 0.1f), q = p;
  shard.step(p, g, 1e-2f, 1.0f, 1);
  whole.step(q, g, 1e-2f, 1.0f, 1);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (i >= segment.offset && i < segment.offset + segment.count)
      REQUIRE(p[i] == q[i]);
    else
      REQUIRE(p[i] == 0.5f);
  }
  CHECK_THROWS_AS(AdamW(layout, {{layout.total() - 1, 2}}, AdamWSettings{}), std::out_of_range);
}

TEST_CASE("warmup is linear and the cosine decay ends at min_lr", "[train][optimizer]") {
  const LrSchedule s{1.0f, 0.1f, 4, 14};
  CHECK(s.at(0) == Approx(0.25f));
  CHECK(s.at(3) == Approx(1.0f));
  CHECK(s.at(4) == Approx(1.0f));
  CHECK(s.at(9) == Approx(0.1f + 0.5f * 0.9f));  // half way through the decay
  CHECK(s.at(14) == Approx(0.1f));
  CHECK(s.at(100) == Approx(0.1f));
  for (int i = 5; i < 14; ++i) CHECK(s.at(i) < s.at(i - 1));
  const LrSchedule none{2.0f, 0.2f, 0, 10};
  CHECK(none.at(0) == Approx(2.0f));
}

TEST_CASE("clipping scales the global norm down to the limit and never up", "[train][optimizer]") {
  CHECK(clip_scale(10.0, 1.0f) == Approx(0.1f).epsilon(1e-5));
  CHECK(clip_scale(0.5, 1.0f) == 1.0f);
  CHECK(clip_scale(10.0, 0.0f) == 1.0f);
  CHECK(clip_scale(std::nan(""), 1.0f) == 1.0f);
  const std::vector<float> g{3.0f, 4.0f};
  CHECK(std::sqrt(sum_of_squares(g)) == Approx(5.0));
}
