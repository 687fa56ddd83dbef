#include <catch2/catch.hpp>

#include "health/pairing.hpp"

using namespace gpudirect::launcher::health;
using V = std::vector<std::string>;

TEST_CASE("the first pass pairs nodes disjointly in order and leaves the odd one out", "[health]") {
  const auto even = first_pass_pairs({"n1", "n2", "n3", "n4"});
  CHECK(even.pairs == std::vector<NodePair>{{"n1", "n2"}, {"n3", "n4"}});
  CHECK(even.left_over.empty());
  const auto odd = first_pass_pairs({"n1", "n2", "n3"});
  CHECK(odd.pairs == std::vector<NodePair>{{"n1", "n2"}});
  CHECK(odd.left_over == "n3");
  CHECK(first_pass_pairs({"n1"}).pairs.empty());
  CHECK(first_pass_pairs({}).left_over.empty());
}

TEST_CASE("the second pass puts every suspect next to a good node, each good node once per round", "[health]") {
  const auto rounds = second_pass_rounds({"s1", "s2", "s3"}, {"g1", "g2"});
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0] == std::vector<NodePair>{{"s1", "g1"}, {"s2", "g2"}});
  CHECK(rounds[1] == std::vector<NodePair>{{"s3", "g1"}});
  CHECK(second_pass_rounds({"s1", "s2"}, {"g1", "g2", "g3"}).size() == 1);
  CHECK(second_pass_rounds({"s1"}, {}).empty());
  CHECK(second_pass_rounds({}, {"g1"}).empty());
}

TEST_CASE("groups grow 4, 8, 16 and are disjoint", "[health]") {
  CHECK(growing_group_sizes(3).empty());
  CHECK(growing_group_sizes(4) == std::vector<std::size_t>{4});
  CHECK(growing_group_sizes(10) == std::vector<std::size_t>{4, 8});
  CHECK(growing_group_sizes(16) == std::vector<std::size_t>{4, 8, 16});
  const V nodes{"a", "b", "c", "d", "e", "f", "g", "h", "i"};
  CHECK(groups_of(nodes, 4) == std::vector<V>{{"a", "b", "c", "d"}, {"e", "f", "g", "h"}});
  CHECK(groups_of(nodes, 8) == std::vector<V>{{"a", "b", "c", "d", "e", "f", "g", "h"}});
  CHECK(groups_of(nodes, 16).empty());
}
