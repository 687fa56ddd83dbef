#include <catch2/catch.hpp>

#include "gpudirect/hostlist.hpp"

using gpudirect::expand_hostlist;
using V = std::vector<std::string>;

TEST_CASE("Slurm host lists expand in Slurm's order", "[hostlist]") {
  CHECK(expand_hostlist("node1") == V{"node1"});
  CHECK(expand_hostlist("node[1-3]") == V{"node1", "node2", "node3"});
  CHECK(expand_hostlist("node[01-03,7],login1") == V{"node01", "node02", "node03", "node7", "login1"});
  CHECK(expand_hostlist("n[008-010]") == V{"n008", "n009", "n010"});
  CHECK(expand_hostlist("a[1-2]-b[3-4]") == V{"a1-b3", "a1-b4", "a2-b3", "a2-b4"});
  CHECK(expand_hostlist(" gpu-a3[1,3] , gpu-b7 ") == V{"gpu-a31", "gpu-a33", "gpu-b7"});
  CHECK(expand_hostlist("rack[9-10]") == V{"rack9", "rack10"});
  CHECK(expand_hostlist("a3mega-[0-1]x") == V{"a3mega-0x", "a3mega-1x"});
}

TEST_CASE("malformed host lists are errors quoting the list", "[hostlist]") {
  for (const char* bad : {"", "node[3-1]", "node[1-", "node[]", "node[a-b]", "n1,,n2", "node]1[", "a[[1]]", "n[1-99999999]"})
    CHECK_THROWS_WITH(expand_hostlist(bad), Catch::Contains("invalid host list"));
}
