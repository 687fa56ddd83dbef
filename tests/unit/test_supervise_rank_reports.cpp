#include <catch2/catch.hpp>

#include "supervise/rank_reports.hpp"

using namespace gpudirect::launcher::supervise;
using V = std::vector<std::string>;

namespace {
const V kHosts = block_rank_hosts({"node1", "node2", "node3", "node4"}, 2);
}

TEST_CASE("ranks are laid out on the nodes in blocks, as Slurm does by default", "[supervise]") {
  CHECK(kHosts == V{"node1", "node1", "node2", "node2", "node3", "node3", "node4", "node4"});
}

TEST_CASE("the lost peer the survivors name is blamed, most named first, and survivors' own exits are not", "[supervise]") {
  const std::string output =
      "gpudirect train: rank 5 on node3 is unreachable from rank 7 on node4: no progress for 5.0 s (--timeout); a link is down\n"
      "gpudirect train: rank 3 on node2 is unreachable from rank 5 on node3: no progress for 5.0 s (--timeout)\n"
      "gpudirect train: rank 3 on node2 is unreachable from rank 1 on node1: no progress for 5.0 s (--timeout)\n"
      "srun: error: node4: tasks 6-7: Exited with exit code 1\n"
      "srun: error: node1: tasks 0-1: Killed\n";
  CHECK(blamed_hosts(output, kHosts) == V{"node2", "node3"});
}

TEST_CASE("a rank that never reached the rendezvous is blamed through the rank layout", "[supervise]") {
  const std::string output =
      "gpudirect train: all_gather 'fabric/hosts': rank 2 of 8 never reached the rendezvous within 5.00 s: it did not start\n"
      "gpudirect train: rank 0 on node1 is gone: its connection to the rendezvous closed without a goodbye\n";
  CHECK(blamed_hosts(output, kHosts) == V{"node2"});
  CHECK(blamed_hosts("rank 12 of 16 never reached the rendezvous", kHosts).empty());  // not a rank of this layout
}

TEST_CASE("srun's node failure and a silent peer are strong, and 'is gone' counts only alone", "[supervise]") {
  CHECK(blamed_hosts("srun: error: Node failure on node4\n", kHosts) == V{"node4"});
  CHECK(blamed_hosts("rank 4 on node3 made no progress for 10.0 s (--timeout) in all_reduce\n", kHosts) == V{"node3"});
  const std::string killed =
      "gpudirect train: rank 0 on node1 (the rendezvous server) is gone: its connection closed (killed, crashed, ...)\n"
      "gpudirect train: rank 0 on node1 (the rendezvous server) is gone: its connection closed (killed, crashed, ...)\n";
  CHECK(blamed_hosts(killed, kHosts) == V{"node1"});
  CHECK(blamed_hosts("srun: error: node1: task 0: Killed\nsome other line\n", kHosts).empty());
}
