#include <catch2/catch.hpp>

#include "supervise/node_pool.hpp"

#include <stdexcept>

using namespace gpudirect::launcher::supervise;
using V = std::vector<std::string>;

TEST_CASE("the last --spare-nodes nodes wait and the rest train", "[supervise]") {
  NodePool pool({"n1", "n2", "n3", "n4", "n5", "n6"}, 2);
  CHECK(pool.training() == V{"n1", "n2", "n3", "n4"});
  CHECK(pool.spares() == V{"n5", "n6"});
  CHECK(pool.is_training("n3"));
  CHECK_FALSE(pool.is_training("n5"));
  CHECK_THROWS_AS(NodePool({"n1", "n2"}, 2), std::invalid_argument);
  CHECK_THROWS_AS(NodePool({"n1", "n2"}, -1), std::invalid_argument);
  CHECK(NodePool({"n1", "n2"}, 0).spares().empty());
}

TEST_CASE("a replaced node leaves for good and the spare trains in the allocation's order", "[supervise]") {
  NodePool pool({"n1", "n2", "n3", "n4", "n5", "n6"}, 2);
  pool.take_out("n2");
  CHECK(pool.training() == V{"n1", "n3", "n4"});
  const auto spare = pool.take_spare();
  REQUIRE(spare);
  CHECK(*spare == "n5");
  pool.add_training(*spare);
  CHECK(pool.training() == V{"n1", "n3", "n4", "n5"});
  pool.take_out("n1");
  const auto bad_spare = pool.take_spare();
  REQUIRE(bad_spare);
  pool.take_out_spare(*bad_spare);
  CHECK_FALSE(pool.take_spare());  // none left
  CHECK(pool.taken_out() == V{"n2", "n1", "n6"});
  CHECK(pool.training() == V{"n3", "n4", "n5"});
  pool.take_out("n9");  // not training: nothing happens
  CHECK(pool.taken_out().size() == 3);
}

TEST_CASE("a node is forgiven a cleared fault once", "[supervise]") {
  NodePool pool({"n1", "n2"}, 0);
  CHECK(pool.forgive_once("n1"));
  CHECK(pool.forgive_once("n2"));
  CHECK_FALSE(pool.forgive_once("n1"));
}
