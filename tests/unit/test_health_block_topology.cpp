// Slurm's block topology in the health sweep (launcher/commands/health/block_topology.hpp): the
// blocks read from scontrol show topology's lines or a topology.conf, and the sweep's pairs split
// into inside a block (NVLink) and across blocks (RoCE).
#include <catch2/catch.hpp>

#include "health/block_topology.hpp"

#include <stdexcept>
#include <string>

using namespace gpudirect::launcher::health;

namespace {

// scontrol show topology on topology/block: one line per block (Slurm 23.11+).
constexpr const char* kScontrol =
    "BlockName=nvl1 BlockIndex=0 Nodes=a4x-[00-17] BlockSize=18\n"
    "BlockName=nvl2 BlockIndex=1 Nodes=a4x-[18-35] BlockSize=18\n";

SweepRun pair(const std::string& a, const std::string& b, double busbw) {
  SweepRun run;
  run.nodes = {a, b};
  run.outcome = Outcome::measured;
  run.busbw = busbw;
  return run;
}

}  // namespace

TEST_CASE("block topology from scontrol show topology: names and expanded node lists", "[health][block]") {
  const auto blocks = parse_block_topology(kScontrol);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].name == "nvl1");
  CHECK(blocks[0].nodes.size() == 18);
  CHECK(blocks[0].nodes.front() == "a4x-00");
  CHECK(blocks[1].nodes.back() == "a4x-35");
}

TEST_CASE("block topology from topology.conf: comments, BlockSizes= and switch lines are no blocks, keys without case", "[health][block]") {
  const auto blocks = parse_block_topology(
      "# A4X: 18 VMs per NVL72 domain\n"
      "BlockName=b1 Nodes=n[1-2]  # first domain\n"
      "blockname=b2 nodes=n[3-4]\n"
      "BlockSizes=18,576\n"
      "SwitchName=s0 Nodes=n[1-4]\n"
      "# BlockName=b3 Nodes=n[5-6]\n");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(blocks[1].name == "b2");
  CHECK(blocks[1].nodes == std::vector<std::string>{"n3", "n4"});
  CHECK(parse_block_topology("SwitchName=s0 Nodes=n[1-4]\n").empty());  // topology/tree: no blocks
}

TEST_CASE("block topology: a block without nodes or with a bad hostlist names the line", "[health][block]") {
  CHECK_THROWS_WITH(parse_block_topology("BlockName=b1 Nodes=n1\nBlockName=b2 BlockIndex=1\n"),
                    Catch::Contains("line 2") && Catch::Contains("block b2 has no Nodes="));
  CHECK_THROWS_AS(parse_block_topology("BlockName=b1 Nodes=n[3-\n"), std::invalid_argument);
}

TEST_CASE("pairs inside a block are NVLink pairs, pairs across blocks RoCE, a node in no block unknown", "[health][block]") {
  const auto blocks = parse_block_topology(kScontrol);
  CHECK(pair_path(blocks, "a4x-00", "a4x-17") == PairPath::in_block);
  CHECK(pair_path(blocks, "a4x-17", "a4x-18") == PairPath::across_blocks);
  CHECK(pair_path(blocks, "a4x-00", "login-1") == PairPath::unknown);
  CHECK(pair_path({}, "a4x-00", "a4x-01") == PairPath::unknown);
}

TEST_CASE("the sweep report lists pairs inside a block apart from pairs across blocks", "[health][block]") {
  const auto blocks = parse_block_topology(kScontrol);
  SweepRun group;
  group.nodes = {"a4x-00", "a4x-01", "a4x-02", "a4x-03"};
  group.phase = Phase::group;
  const std::string report =
      block_pairs_report(blocks, {pair("a4x-00", "a4x-01", 700), pair("a4x-17", "a4x-18", 180), pair("a4x-02", "gpu-9", 1), group});
  CHECK(report ==
        "# block topology: 2 blocks\n"
        "# pairs inside a block (NVLink, one IMEX domain): 1\n"
        "  a4x-00 - a4x-01: 700 GB/s (block nvl1)\n"
        "# pairs across blocks (RoCE): 1\n"
        "  a4x-17 - a4x-18: 180 GB/s (blocks nvl1, nvl2)\n"
        "# pairs with a node in no block: 1\n"
        "  a4x-02 - gpu-9: 1 GB/s (gpu-9 is in no block)\n");
  CHECK(block_pairs_report({}, {pair("a", "b", 1)}).empty());
}
