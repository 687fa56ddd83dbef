// A topology file names the NICs of the node it was saved on; on a node whose interfaces are named
// otherwise, the task must fail naming them rather than hand NCCL names that do not exist.
#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/network_interfaces.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"

#include <algorithm>

using namespace gpudirect;

namespace {

const std::vector<std::string> kA3MegaInterfaces{"lo",      "enp0s12",  "enp6s0",   "enp7s0",   "enp13s0",
                                                 "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"};

TaskSetupInput tcpxo_task(std::optional<std::vector<std::string>> interfaces) {
  TaskSetupInput in;
  in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
  in.request.mode = Mode::tcpxo;
  in.hostname = "node2";
  in.facts.tcpxo_plugin = true;
  in.node_interfaces = std::move(interfaces);
  in.env = {{"SLURM_LOCALID", "0"}, {"SLURM_LOCAL_TASKS", "1"}, {"SLURM_STEP_GPUS", "0"}, {"CUDA_VISIBLE_DEVICES", "0"}};
  in.allowed_cpus = CpuSet::range(0, 207);
  return in;
}

}  // namespace

TEST_CASE("missing_interfaces keeps the wanted order, once each", "[nic_names]") {
  CHECK(missing_interfaces({"a", "b", "c", "b"}, {"c", "x"}) == std::vector<std::string>{"a", "b"});
  CHECK(missing_interfaces({}, {"a"}).empty());
  CHECK(missing_interfaces({"a"}, {}) == std::vector<std::string>{"a"});
}

TEST_CASE("this process sees its loopback interface", "[nic_names]") {
  const auto names = network_interface_names();
  REQUIRE(names);
  CHECK(std::find(names->begin(), names->end(), "lo") != names->end());
}

TEST_CASE("a node whose NIC names differ from the topology's fails the task naming them", "[nic_names]") {
  const Topology topology = load_topology_file(gpudirect::testing::fixture_path("a3-megagpu-8g.xml"));
  const NodePlan plan = plan_node(topology);

  SECTION("every name present: the task is set up") { CHECK(plan_task(topology, plan, tcpxo_task(kA3MegaInterfaces)).mode == Mode::tcpxo); }
  SECTION("not probed (offline tools): no check") { CHECK(plan_task(topology, plan, tcpxo_task(std::nullopt)).mode == Mode::tcpxo); }
  SECTION("a data NIC renamed: refused, naming node, interface and fix") {
    auto renamed = kA3MegaInterfaces;
    std::replace(renamed.begin(), renamed.end(), std::string("enp6s0"), std::string("eth1"));
    try {
      (void)plan_task(topology, plan, tcpxo_task(renamed));
      FAIL("a missing data NIC was accepted");
    } catch (const TaskSetupError& e) {
      const std::string message = e.what();
      CHECK_THAT(message, Catch::StartsWith("on node2: the topology (hwloc-xml:"));
      CHECK_THAT(message, Catch::Contains("names network interface enp6s0 that this node does not have (it has lo,enp0s12,eth1,"));
      CHECK_THAT(message, Catch::Contains("set topology= in plugstack.conf"));
    }
  }
  SECTION("the control NIC missing as well: every missing name, data NICs first") {
    std::vector<std::string> only_lo{"lo"};
    try {
      (void)plan_task(topology, plan, tcpxo_task(only_lo));
      FAIL("missing NICs were accepted");
    } catch (const TaskSetupError& e) {
      CHECK_THAT(e.what(), Catch::Contains("interfaces enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0,enp0s12 that"));
    }
  }
}
