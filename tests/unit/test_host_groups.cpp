// How a job across hosts splits into host groups for all_reduce by host (comm/algorithms/host_groups.hpp),
// and the group transport's checks of its members.
#include <catch2/catch.hpp>

#include "comm/algorithms/host_groups.hpp"
#include "comm/transport/group_transport.hpp"
#include "comm/transport/thread_transport.hpp"

#include <chrono>
#include <stdexcept>

using gpudirect::comm::GroupTransport;
using gpudirect::comm::host_groups;

TEST_CASE("host groups: the host's ranks, and the ranks at the same place on every host", "[comm][host-groups]") {
  SECTION("hosts in blocks") {
    const std::vector<std::string> hosts = {"a", "a", "b", "b", "c", "c"};
    const auto g = host_groups(hosts, 3);
    REQUIRE(g);
    CHECK(g->ranks == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}});
    CHECK(g->local == std::vector<int>{2, 3});
    CHECK(g->across == std::vector<int>{1, 3, 5});
    CHECK(host_groups(hosts, 4)->across == std::vector<int>{0, 2, 4});
  }
  SECTION("hosts interleaved (srun --distribution=cyclic): places follow rank order within each host") {
    const std::vector<std::string> hosts = {"b", "a", "b", "a"};
    const auto g = host_groups(hosts, 1);
    REQUIRE(g);
    CHECK(g->ranks == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
    CHECK(g->local == std::vector<int>{1, 3});
    CHECK(g->across == std::vector<int>{0, 1});  // host b first: its lowest rank is 0
    CHECK(host_groups(hosts, 2)->across == std::vector<int>{2, 3});
  }
  SECTION("no groups where they bring nothing or would not line up") {
    CHECK_FALSE(host_groups({}, 0));                         // the transport does not know
    CHECK_FALSE(host_groups({"a", "a", "a", "a"}, 1));       // one host
    CHECK_FALSE(host_groups({"a", "b", "c"}, 1));            // one rank a host
    CHECK_FALSE(host_groups({"a", "a", "b", "b", "b"}, 0));  // uneven
    CHECK_FALSE(host_groups({"a", "a", "b", "b"}, 4));       // not a rank of the list
    CHECK_FALSE(host_groups({"a", "a", "b", "b"}, -1));
  }
}

TEST_CASE("group transport: members are distinct ranks of the parent, this rank among them", "[comm][host-groups]") {
  auto parents = gpudirect::comm::make_thread_transports(4, std::chrono::milliseconds(100));
  GroupTransport group(*parents[2], {3, 2});
  CHECK(group.rank() == 1);
  CHECK(group.size() == 2);
  CHECK(group.hosts().empty());  // a group never splits again
  CHECK_THROWS_AS(GroupTransport(*parents[2], {0, 1}), std::invalid_argument);
  CHECK_THROWS_AS(GroupTransport(*parents[2], {2, 2}), std::invalid_argument);
  CHECK_THROWS_AS(GroupTransport(*parents[2], {2, 4}), std::invalid_argument);
  CHECK_THROWS_AS(GroupTransport(*parents[2], {}), std::invalid_argument);
}
