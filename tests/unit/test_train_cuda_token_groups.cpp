// Positions grouped by token for the deterministic wte gradient (train/cuda/token_groups.hpp).
#include <catch2/catch.hpp>

#include "train/cuda/token_groups.hpp"

#include <random>
#include <vector>

using namespace gpudirect::train::cuda;

TEST_CASE("token groups: distinct tokens ascending, positions in order within a group", "[train][cuda]") {
  const std::vector<std::int32_t> tokens{5, 1, 5, 3, 1};
  const TokenGroups g = group_by_token(tokens, 8);
  CHECK(g.tokens == std::vector<std::int32_t>{1, 3, 5});
  CHECK(g.offsets == std::vector<std::int32_t>{0, 2, 3, 5});
  CHECK(g.positions == std::vector<std::int32_t>{1, 4, 3, 0, 2});
  CHECK_THROWS_WITH(group_by_token(std::vector<std::int32_t>{1, 8}, 8), Catch::Contains("[1]"));
  CHECK_THROWS(group_by_token(std::vector<std::int32_t>{-1}, 8));
}

TEST_CASE("token groups: every position once, under its own token", "[train][cuda]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::int32_t> token(0, 49);
  std::vector<std::int32_t> tokens(1000);
  for (auto& t : tokens) t = token(rng);
  const TokenGroups g = group_by_token(tokens, 50);
  REQUIRE(g.offsets.size() == g.tokens.size() + 1);
  REQUIRE(g.offsets.back() == 1000);
  std::vector<int> seen(tokens.size(), 0);
  for (std::size_t k = 0; k < g.tokens.size(); ++k) {
    REQUIRE(g.offsets[k] < g.offsets[k + 1]);
    for (std::int32_t i = g.offsets[k]; i < g.offsets[k + 1]; ++i) {
      const auto p = static_cast<std::size_t>(g.positions[static_cast<std::size_t>(i)]);
      CHECK(tokens[p] == g.tokens[k]);
      if (i > g.offsets[k]) CHECK(g.positions[static_cast<std::size_t>(i - 1)] < g.positions[static_cast<std::size_t>(i)]);
      ++seen[p];
    }
  }
  for (const int s : seen) REQUIRE(s == 1);
}
