#include <catch2/catch.hpp>

#include "train/model.hpp"

#include <cmath>
#include <vector>

using namespace gpudirect::train;

TEST_CASE("parameter layout: model.hpp's order, contiguous, totals equal parameter_count", "[train]") {
  for (const auto& name : preset_names()) {
    const GptConfig config = preset_config(name);
    const ParameterLayout layout(config);
    CHECK(layout.total() == parameter_count(config));
    std::size_t next = 0;
    for (const auto& t : layout.tensors()) {
      CHECK(t.offset == next);
      std::size_t count = 1;
      for (int d : t.shape) count *= static_cast<std::size_t>(d);
      CHECK(t.count == count);
      next += t.count;
    }
    CHECK(next == layout.total());
  }
  const ParameterLayout layout(preset_config("tiny"));
  std::vector<std::string> names;
  for (const auto& t : layout.tensors()) names.push_back(t.name);
  CHECK(names.size() == 2 + 2 * 12 + 2);
  CHECK(names[0] == "wte");
  CHECK(names[1] == "wpe");
  CHECK(std::vector<std::string>(names.begin() + 2, names.begin() + 14) ==
        std::vector<std::string>{"h.0.ln1.w", "h.0.ln1.b", "h.0.qkv.w", "h.0.qkv.b", "h.0.proj.w", "h.0.proj.b", "h.0.ln2.w", "h.0.ln2.b",
                                 "h.0.fc.w", "h.0.fc.b", "h.0.fcproj.w", "h.0.fcproj.b"});
  CHECK(names[26] == "lnf.w");
  CHECK(names[27] == "lnf.b");
  CHECK(layout.find("h.1.qkv.w").shape == std::vector<int>{192, 64});
  CHECK(layout.find("h.1.fcproj.w").shape == std::vector<int>{64, 256});
  CHECK(layout.find("wte").shape == std::vector<int>{512, 64});
  CHECK(layout.find("h.1.qkv.w").layer == 1);
  CHECK(layout.find("wpe").layer == -1);
  CHECK(layout.find("wte").weight_decay);
  CHECK(layout.find("h.0.fc.w").weight_decay);
  CHECK_FALSE(layout.find("h.0.fc.b").weight_decay);
  CHECK_FALSE(layout.find("h.0.ln1.w").weight_decay);
  CHECK_FALSE(layout.find("lnf.w").weight_decay);
  CHECK_THROWS_AS(layout.find("h.9.qkv.w"), std::out_of_range);
}

TEST_CASE("parameter layout: ranges of the embeddings, each block and the final norm tile the buffer", "[train]") {
  const ParameterLayout layout(preset_config("tiny"));
  const auto emb = layout.embedding_range();
  CHECK(emb.first == 0);
  CHECK(emb.second == (512 + 64) * 64u);
  const auto l0 = layout.layer_range(0), l1 = layout.layer_range(1);
  CHECK(l0.first == emb.second);
  CHECK(l0.second == 12 * 64 * 64 + 13 * 64u);
  CHECK(l1.first == l0.first + l0.second);
  const auto fin = layout.final_norm_range();
  CHECK(fin.first == l1.first + l1.second);
  CHECK(fin.first + fin.second == layout.total());
  CHECK_THROWS_AS(layout.layer_range(2), std::out_of_range);
  CHECK_THROWS_AS(layout.layer_range(-1), std::out_of_range);
}

TEST_CASE("GPT-2 initialisation: deterministic from the seed, documented statistics", "[train]") {
  const GptConfig config = preset_config("tiny");
  const ParameterLayout layout(config);
  std::vector<float> a(layout.total()), b(layout.total()), c(layout.total());
  initialize_parameters(config, a, 7);
  initialize_parameters(config, b, 7);
  initialize_parameters(config, c, 8);
  CHECK(a == b);
  CHECK(a != c);
  auto stats = [&](const std::string& name) {
    const auto& t = layout.find(name);
    double sum = 0, sq = 0;
    for (std::size_t i = t.offset; i < t.offset + t.count; ++i) {
      sum += a[i];
      sq += static_cast<double>(a[i]) * a[i];
    }
    const double mean = sum / static_cast<double>(t.count);
    return std::pair{mean, std::sqrt(sq / static_cast<double>(t.count) - mean * mean)};
  };
  CHECK(std::abs(stats("wte").first) < 1e-3);
  CHECK(stats("wte").second == Approx(0.02).epsilon(0.03));
  CHECK(stats("h.0.qkv.w").second == Approx(0.02).epsilon(0.03));
  CHECK(stats("h.1.proj.w").second == Approx(0.02 / std::sqrt(4.0)).epsilon(0.05));
  CHECK(stats("h.1.fcproj.w").second == Approx(0.02 / std::sqrt(4.0)).epsilon(0.03));
  for (const char* ones : {"h.0.ln1.w", "h.1.ln2.w", "lnf.w"}) CHECK(stats(ones) == std::pair{1.0, 0.0});
  for (const char* zeros : {"h.0.qkv.b", "h.1.fcproj.b", "lnf.b"}) CHECK(stats(zeros) == std::pair{0.0, 0.0});
  // Tensors draw from different streams: two tensors of the same shape differ.
  const auto& q0 = layout.find("h.0.qkv.w");
  const auto& q1 = layout.find("h.1.qkv.w");
  CHECK_FALSE(std::equal(a.begin() + static_cast<long>(q0.offset), a.begin() + static_cast<long>(q0.offset + q0.count),
                         a.begin() + static_cast<long>(q1.offset)));
  std::vector<float> wrong(10);
  CHECK_THROWS_WITH(initialize_parameters(config, wrong, 1), Catch::Contains("parameter buffer has 10 floats"));
}
