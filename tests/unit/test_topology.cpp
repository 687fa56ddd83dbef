#include <catch2/catch.hpp>

#include "gpudirect/binding.hpp"
#include "gpudirect/topology_sources.hpp"

#include <string>

using namespace gpudirect;

namespace {

std::string fixture(const std::string& name) { return std::string(GPUDIRECT_FIXTURE_DIR) + "/" + name; }

std::vector<std::string> nic_names(const Topology& t, const std::vector<int>& nics) {
  std::vector<std::string> out;
  for (int n : nics) {
    const Nic& nic = t.nics[static_cast<std::size_t>(n)];
    out.push_back(nic.interface_name.empty() ? nic.rdma_device : nic.interface_name);
  }
  return out;
}

const std::vector<std::string> kA3MegaNics{"enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"};

}  // namespace

TEST_CASE("A3 Mega: one NIC per GPU in bus order, control NIC outside the switches", "[topology][binding]") {
  for (const char* file : {"a3-megagpu-8g.xml", "a3-megagpu-8g.nccl.xml"}) {
    INFO(file);
    const Topology t = load_topology_file(fixture(file));
    REQUIRE(t.gpus.size() == 8);
    REQUIRE(t.nics.size() == 9);
    CHECK(t.all_cpus.count() == 208);
    const NodePlan plan = plan_node(t);
    REQUIRE(plan.control_nic);
    CHECK(t.nics[static_cast<std::size_t>(*plan.control_nic)].interface_name == "enp0s12");
    CHECK(nic_names(t, plan.data_nics) == kA3MegaNics);
    for (std::size_t g = 0; g < 8; ++g) {
      CHECK(nic_names(t, plan.gpus[g].nics) == std::vector<std::string>{kA3MegaNics[g]});
      CHECK_FALSE(plan.gpus[g].nic_fallback);
      CHECK(t.gpus[g].numa_node == (g < 4 ? 0 : 1));
      CHECK(t.gpus[g].local_cpus.to_list() == (g < 4 ? "0-51,104-155" : "52-103,156-207"));
      CHECK(t.gpus[g].device_id == 0x2330);
    }
  }
}

TEST_CASE("A3 High: two GPUs share each NIC", "[topology][binding]") {
  for (const char* file : {"a3-highgpu-8g.xml", "a3-highgpu-8g.nccl.xml"}) {
    INFO(file);
    const Topology t = load_topology_file(fixture(file));
    const NodePlan plan = plan_node(t);
    const std::vector<std::string> nics{"enp6s0", "enp12s0", "enp134s0", "enp140s0"};
    for (std::size_t g = 0; g < 8; ++g) CHECK(nic_names(t, plan.gpus[g].nics) == std::vector<std::string>{nics[g / 2]});
    CHECK(t.nics[static_cast<std::size_t>(*plan.control_nic)].interface_name == "enp0s12");
  }
}

TEST_CASE("p5-like: four EFA devices per GPU", "[topology][binding]") {
  for (const char* file : {"p5-like.xml", "p5-like.nccl.xml"}) {
    INFO(file);
    const Topology t = load_topology_file(fixture(file));
    const NodePlan plan = plan_node(t);
    REQUIRE(t.nics.size() == 33);
    for (std::size_t g = 0; g < 8; ++g) {
      const auto names = nic_names(t, plan.gpus[g].nics);
      REQUIRE(names.size() == 4);
      const int base = 0x10 + static_cast<int>(g) * 0x10;
      for (int k = 0; k < 4; ++k) CHECK(names[static_cast<std::size_t>(k)] == "rdmap" + std::to_string(base + 2 + k) + "s0");
    }
  }
}

TEST_CASE("ND H100 v5-like: one IB HCA per GPU with its netdev", "[topology][binding]") {
  for (const char* file : {"nd-h100-v5-like.xml", "nd-h100-v5-like.nccl.xml"}) {
    INFO(file);
    const Topology t = load_topology_file(fixture(file));
    const NodePlan plan = plan_node(t);
    for (std::size_t g = 0; g < 8; ++g) {
      REQUIRE(plan.gpus[g].nics.size() == 1);
      const Nic& nic = t.nics[static_cast<std::size_t>(plan.gpus[g].nics[0])];
      CHECK(nic.rdma_device == "mlx5_" + std::to_string(g));
      CHECK(nic.interface_name == "ib" + std::to_string(g));
      CHECK(t.gpus[g].numa_node == (g < 4 ? 0 : 1));
    }
  }
}

TEST_CASE("hwloc XML and NCCL XML of one machine give the same plan", "[topology][binding]") {
  for (const char* machine : {"a3-megagpu-8g", "a3-highgpu-8g", "p5-like", "nd-h100-v5-like", "local-a3mega-2cpu"}) {
    INFO(machine);
    const Topology a = load_topology_file(fixture(std::string(machine) + ".xml"));
    const Topology b = load_topology_file(fixture(std::string(machine) + ".nccl.xml"));
    REQUIRE(a.gpus.size() == b.gpus.size());
    const NodePlan pa = plan_node(a), pb = plan_node(b);
    for (std::size_t g = 0; g < a.gpus.size(); ++g) {
      CHECK(a.gpus[g].address == b.gpus[g].address);
      CHECK(a.gpus[g].local_cpus == b.gpus[g].local_cpus);
      CHECK(nic_names(a, pa.gpus[g].nics) == nic_names(b, pb.gpus[g].nics));
    }
  }
}

TEST_CASE("a node without GPUs gives an empty plan, not an error", "[topology][binding]") {
  for (const char* file : {"gpu-less.xml", "gpu-less.nccl.xml"}) {
    const Topology t = load_topology_file(fixture(file));
    CHECK(t.gpus.empty());
    const NodePlan plan = plan_node(t);
    CHECK(plan.gpus.empty());
    CHECK(plan.data_nics.empty());
  }
}

TEST_CASE("a GPU with no NIC on its switch falls back to a NIC on its NUMA node", "[binding]") {
  Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  // Move GPU 0 under a switch of its own: it now shares no switch with any NIC.
  t.gpus[0].switch_path = {PciAddress::parse("0000:40:00.0")};
  const NodePlan plan = plan_node(t);
  REQUIRE(plan.gpus[0].nics.size() == 1);
  CHECK(plan.gpus[0].nic_fallback);
  CHECK(t.nics[static_cast<std::size_t>(plan.gpus[0].nics[0])].numa_node == 0);
  CHECK_FALSE(plan.gpus[1].nic_fallback);
}

TEST_CASE("live topology loads on this machine", "[topology]") {
  const Topology t = load_live_topology();
  CHECK(t.all_cpus.count() >= 1);
  CHECK(t.source == "hwloc");
}

TEST_CASE("malformed topology files are errors that name the file", "[topology]") {
  for (const char* file : {"malformed-truncated.xml", "malformed-wrong-root.xml", "malformed-pci-no-busid.nccl.xml",
                           "malformed-bad-affinity.nccl.xml", "malformed-truncated.nccl.xml", "malformed-bad-busid.nccl.xml",
                           "does-not-exist.xml"}) {
    INFO(file);
    CHECK_THROWS_WITH(load_topology_file(fixture(file)), Catch::Contains(file));
  }
}

TEST_CASE("bind_task: CPUs of the task's GPUs within what Slurm allowed", "[binding]") {
  const Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  const NodePlan plan = plan_node(t);
  const TaskBinding one = bind_task(t, plan, {5}, t.all_cpus);
  CHECK(one.cpus.to_list() == "52-103,156-207");
  CHECK(nic_names(t, one.nics) == std::vector<std::string>{"enp135s0"});
  CHECK(one.numa_nodes == std::vector<int>{1});
  CHECK(one.warning.empty());

  const TaskBinding two = bind_task(t, plan, {3, 4}, t.all_cpus);
  CHECK(two.cpus.count() == 208);
  CHECK(two.numa_nodes == std::vector<int>{0, 1});

  const TaskBinding limited = bind_task(t, plan, {0}, CpuSet::parse_list("10-20,60-70"));
  CHECK(limited.cpus.to_list() == "10-20");

  const TaskBinding outside = bind_task(t, plan, {0}, CpuSet::parse_list("60-70"));
  CHECK(outside.cpus.to_list() == "60-70");
  CHECK_THAT(outside.warning, Catch::Contains("outside the CPUs Slurm gave"));

  CHECK_THROWS_WITH(bind_task(t, plan, {8}, t.all_cpus), Catch::Contains("has 8 GPUs"));
}
