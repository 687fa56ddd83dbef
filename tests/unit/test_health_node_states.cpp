#include <catch2/catch.hpp>

#include "health/node_states.hpp"

using namespace gpudirect::launcher::health;

TEST_CASE("sinfo's node lines: state, reason, and whether a pair can run there", "[health]") {
  const auto nodes = parse_sinfo_nodes(
      "node1|idle|none\n"
      "node2|drained|gpudirect health: all_gather 0.4 GB/s with node1, threshold 1|x\n"
      "node3|down*|Not responding\n"
      "node4|mixed|none\n"
      "node1|idle|none\n"
      "\n");
  REQUIRE(nodes.size() == 4);
  CHECK(nodes[0].node == "node1");
  CHECK(nodes[0].usable);
  CHECK(nodes[1].reason == "gpudirect health: all_gather 0.4 GB/s with node1, threshold 1|x");
  CHECK_FALSE(nodes[1].usable);
  CHECK(drained_state(nodes[1].state));
  CHECK_FALSE(nodes[2].usable);
  CHECK(nodes[3].usable);
  CHECK_THROWS_WITH(parse_sinfo_nodes("node1 idle\n"), Catch::Contains("expected NODE|STATE|REASON"));
}

TEST_CASE("Slurm's states and flag suffixes", "[health]") {
  for (const char* ok : {"idle", "allocated", "mixed", "completing", "idle$", "idle-"}) CHECK(usable_state(ok));
  for (const char* no : {"down", "drained", "draining", "fail", "maint", "idle*", "idle~", "powered_down", "unknown", "inval"})
    CHECK_FALSE(usable_state(no));
  CHECK(drained_state("drained*"));
  CHECK(drained_state("draining"));
  CHECK_FALSE(drained_state("down"));
}
