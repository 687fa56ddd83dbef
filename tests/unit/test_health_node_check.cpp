#include <catch2/catch.hpp>

#include "health/fleet_versions.hpp"
#include "health/node_check_job.hpp"

using namespace gpudirect::launcher::health;

TEST_CASE("the node check is one job, a task per node, each node's JSON in its own file", "[health]") {
  NodeCheckOptions o;
  o.machine_type = "a3-megagpu-8g";
  o.program = "/usr/bin/gpudirect-launch";
  o.check_args = {"--check-rxdm"};
  o.srun_args = {"--reservation=maint"};
  o.timeout_s = 90;
  CHECK(node_check_command({"a1", "a2"}, o, "/w") ==
        std::vector<std::string>{"srun", "--nodes=2", "--nodelist=a1,a2", "--ntasks=2", "--ntasks-per-node=1",
                                 "--job-name=gpudirect-node-check", "--time=3", "--output=/w/check-node-%N.json",
                                 "--error=/w/check-node-%N.log", "--gpus-per-node=8", "--reservation=maint", "/usr/bin/gpudirect-launch",
                                 "check-node", "--machine-type", "a3-megagpu-8g", "--json", "--check-rxdm"});
  CHECK(node_check_path("/w", "a2") == "/w/check-node-a2.json");
}

TEST_CASE("check-node's JSON gives the verdict, the drain reason and comment, and the facts", "[health]") {
  const auto failing = node_check_result(
      "a2",
      R"({"ok": false, "drain": {"reason": "XID", "comment": "gpudirect check-node: GPU 3: x"}, "facts": {"driver_version": "550"}})");
  REQUIRE(failing);
  CHECK_FALSE(failing->ok);
  CHECK(failing->reason == "XID");
  CHECK(failing->comment == "gpudirect check-node: GPU 3: x");
  CHECK(failing->facts["driver_version"] == "550");
  const auto passing = node_check_result("a1", R"({"ok": true, "facts": {}})");
  REQUIRE(passing);
  CHECK(passing->ok);
  CHECK(passing->reason.empty());
  CHECK_FALSE(node_check_result("a3", "srun: error: task 0 failed").has_value());
  CHECK_FALSE(node_check_result("a3", R"({"findings": []})").has_value());
}

TEST_CASE("the fleet's odd node out is named against the version most nodes have", "[health]") {
  std::map<std::string, nlohmann::json> facts;
  for (const char* node : {"n1", "n2", "n3", "n4"})
    facts[node] = {{"driver_version", "550.90.07"}, {"nccl_version", "2.23.4"}, {"mode", "tcpxo"}, {"net_plugin", ""}};
  facts["n3"]["driver_version"] = "535.104.05";
  facts["n4"]["net_plugin"] = "/var/lib/tcpxo/lib64/libnccl-net.so";  // one node with the fact: nothing to compare
  auto odd = odd_ones_out(facts);
  REQUIRE(odd.size() == 1);
  CHECK(odd[0].key == "driver_version");
  CHECK(odd[0].majority == "550.90.07");
  CHECK(odd[0].majority_nodes == 3);
  CHECK(describe(odd[0]) == std::vector<std::string>{"n3: driver_version 535.104.05, the fleet's (3 nodes) 550.90.07"});
  CHECK(to_json(odd)[0]["nodes"]["n3"] == "535.104.05");
  // Two against two: no majority, every node named.
  facts["n4"]["driver_version"] = "535.104.05";
  odd = odd_ones_out(facts);
  REQUIRE(odd.size() == 1);
  CHECK(odd[0].majority.empty());
  CHECK(odd[0].nodes.size() == 4);
  CHECK(describe(odd[0])[0] == "n1: driver_version 550.90.07, and no value is on most nodes");
}
