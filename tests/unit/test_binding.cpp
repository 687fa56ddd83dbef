#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/binding.hpp"
#include "gpudirect/topology_sources.hpp"

#include <string>

using namespace gpudirect;

namespace {

std::string fixture(const std::string& name) { return gpudirect::testing::fixture_path(name); }

std::string nic_name(const Topology& t, int n) {
  const Nic& nic = t.nics[static_cast<std::size_t>(n)];
  return nic.rdma_device.empty() ? nic.interface_name : nic.rdma_device;
}

std::vector<std::string> nic_names(const Topology& t, const std::vector<int>& nics) {
  std::vector<std::string> out;
  for (int n : nics) out.push_back(nic_name(t, n));
  return out;
}

const std::vector<std::string> kA3MegaNics{"enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"};
const std::vector<std::string> kForms{".xml", ".nccl.xml"};

}  // namespace

TEST_CASE("A3 Mega: GPU i gets NIC i in bus order, enp0s12 is the control NIC", "[binding]") {
  for (const std::string& form : kForms) {
    INFO(form);
    const Topology t = load_topology_file(fixture("a3-megagpu-8g" + form));
    const NodePlan plan = plan_node(t);
    REQUIRE(plan.gpus.size() == 8);
    REQUIRE(plan.control_nic);
    CHECK(nic_name(t, *plan.control_nic) == "enp0s12");
    CHECK(nic_names(t, plan.data_nics) == kA3MegaNics);
    for (std::size_t g = 0; g < 8; ++g) {
      CHECK(nic_names(t, plan.gpus[g].nics) == std::vector<std::string>{kA3MegaNics[g]});
      CHECK_FALSE(plan.gpus[g].nic_fallback);
      CHECK(plan.gpus[g].nic_note.empty());
      CHECK(plan.gpus[g].numa_node == (g < 4 ? 0 : 1));
      CHECK(plan.gpus[g].local_cpus.to_list() == (g < 4 ? "0-51,104-155" : "52-103,156-207"));
    }
  }
}

TEST_CASE("A3 High: GPUs 2k and 2k+1 share NIC k", "[binding]") {
  const std::vector<std::string> nics{"enp6s0", "enp12s0", "enp134s0", "enp140s0"};
  for (const std::string& form : kForms) {
    INFO(form);
    const Topology t = load_topology_file(fixture("a3-highgpu-8g" + form));
    const NodePlan plan = plan_node(t);
    for (std::size_t g = 0; g < 8; ++g) CHECK(nic_names(t, plan.gpus[g].nics) == std::vector<std::string>{nics[g / 2]});
    CHECK(nic_names(t, plan.data_nics) == nics);
    CHECK(nic_name(t, *plan.control_nic) == "enp0s12");
  }
}

TEST_CASE("p5-like: each GPU gets the four EFA devices on its switch", "[binding]") {
  for (const std::string& form : kForms) {
    INFO(form);
    const Topology t = load_topology_file(fixture("p5-like" + form));
    const NodePlan plan = plan_node(t);
    for (std::size_t g = 0; g < 8; ++g) {
      const int base = 0x10 * (static_cast<int>(g) + 1);
      std::vector<std::string> expected;
      for (int k = 0; k < 4; ++k) expected.push_back("rdmap" + std::to_string(base + 3 + k) + "s0");
      CHECK(nic_names(t, plan.gpus[g].nics) == expected);
    }
    CHECK(plan.data_nics.size() == 32);
    CHECK(nic_name(t, *plan.control_nic) == "ens32");
  }
}

TEST_CASE("ND H100 v5-like: GPU i gets mlx5_i", "[binding]") {
  for (const std::string& form : kForms) {
    INFO(form);
    const Topology t = load_topology_file(fixture("nd-h100-v5-like" + form));
    const NodePlan plan = plan_node(t);
    for (std::size_t g = 0; g < 8; ++g) {
      CHECK(nic_names(t, plan.gpus[g].nics) == std::vector<std::string>{"mlx5_" + std::to_string(g)});
      CHECK(plan.gpus[g].numa_node == (g < 4 ? 0 : 1));
    }
    CHECK(nic_name(t, *plan.control_nic) == "eth0");
  }
}

TEST_CASE("hwloc XML and NCCL XML of one machine give the same plan", "[binding]") {
  for (const char* machine : {"a3-megagpu-8g", "a3-highgpu-8g", "p5-like", "nd-h100-v5-like", "local-a3mega-2cpu", "gpu-less"}) {
    INFO(machine);
    const Topology a = load_topology_file(fixture(std::string(machine) + ".xml"));
    const Topology b = load_topology_file(fixture(std::string(machine) + ".nccl.xml"));
    REQUIRE(a.gpus.size() == b.gpus.size());
    REQUIRE(a.nics.size() == b.nics.size());
    CHECK(a.all_cpus == b.all_cpus);
    for (std::size_t n = 0; n < a.nics.size(); ++n) {
      CHECK(a.nics[n].address == b.nics[n].address);
      CHECK(a.nics[n].rdma_device == b.nics[n].rdma_device);
      CHECK(a.nics[n].numa_node == b.nics[n].numa_node);
    }
    const NodePlan pa = plan_node(a), pb = plan_node(b);
    CHECK(pa.control_nic == pb.control_nic);
    CHECK(pa.data_nics == pb.data_nics);
    for (std::size_t g = 0; g < a.gpus.size(); ++g) {
      CHECK(a.gpus[g].address == b.gpus[g].address);
      CHECK(pa.gpus[g].nics == pb.gpus[g].nics);
      CHECK(pa.gpus[g].local_cpus == pb.gpus[g].local_cpus);
      CHECK(pa.gpus[g].numa_node == pb.gpus[g].numa_node);
    }
  }
}

TEST_CASE("a node without GPUs gives an empty plan with its NIC as control NIC", "[binding]") {
  const Topology t = load_topology_file(fixture("gpu-less.xml"));
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus.empty());
  CHECK(plan.data_nics.empty());
  REQUIRE(plan.control_nic);
  CHECK(nic_name(t, *plan.control_nic) == "eth0");
  const TaskBinding binding = bind_task(t, plan, {}, CpuSet::parse_list("0-3"));
  CHECK(binding.gpus.empty());
  CHECK(binding.nics.empty());
  CHECK(binding.cpus.to_list() == "0-3");
  CHECK(binding.warning.empty());
  CHECK(plan_node(Topology{}).gpus.empty());
}

TEST_CASE("a GPU with no NIC on its switch falls back to its NUMA node's data NICs", "[binding]") {
  Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  t.gpus[0].switch_path = {PciAddress::parse("0000:40:00.0")};  // alone under its own switch
  t.gpus[6].switch_path = {PciAddress::parse("0000:c0:00.0")};
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nic_fallback);
  CHECK_THAT(plan.gpus[0].nic_note, Catch::Contains("NUMA node 0"));
  // NUMA node 0's four data NICs, shared by the one fallback GPU there.
  CHECK(nic_names(t, plan.gpus[0].nics) == std::vector<std::string>{"enp6s0", "enp7s0", "enp13s0", "enp14s0"});
  CHECK(nic_names(t, plan.gpus[6].nics) == std::vector<std::string>{"enp134s0", "enp135s0", "enp141s0", "enp142s0"});
  CHECK_FALSE(plan.gpus[1].nic_fallback);
  CHECK(nic_names(t, plan.gpus[1].nics) == std::vector<std::string>{"enp6s0", "enp7s0"});  // alone on its switch now
  CHECK(nic_name(t, *plan.control_nic) == "enp0s12");                                      // never a fallback data NIC
}

TEST_CASE("fallback to any data NIC when the GPU's NUMA node has none", "[binding]") {
  Topology t = load_topology_file(fixture("a3-highgpu-8g.xml"));
  for (Nic& nic : t.nics)  // move every data NIC to NUMA node 1 (socket 1) and off the GPUs' switches
    if (nic.interface_name != "enp0s12") {
      nic.numa_node = 1;
      nic.package = 1;
    }
  t.gpus[0].switch_path = {PciAddress::parse("0000:40:00.0")};
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nic_fallback);
  CHECK(plan.gpus[0].nics.size() == 4);
  CHECK_THAT(plan.gpus[0].nic_note, Catch::Contains("or its NUMA node"));
}

TEST_CASE("no NIC shares a switch with any GPU: the rest of the NICs serve them by NUMA node", "[binding]") {
  Topology t = load_topology_file(fixture("a3-megagpu-8g.nccl.xml"));
  for (Nic& nic : t.nics) nic.switch_path.clear();  // every NIC on the root complex
  const NodePlan plan = plan_node(t);
  REQUIRE(plan.control_nic);
  CHECK(nic_name(t, *plan.control_nic) == "enp0s12");
  for (std::size_t g = 0; g < 8; ++g) {
    CHECK(plan.gpus[g].nic_fallback);
    // Four GPUs and the four data NICs of each NUMA node pair one to one in bus order.
    CHECK(nic_names(t, plan.gpus[g].nics) == std::vector<std::string>{kA3MegaNics[g]});
  }
  CHECK(plan.data_nics.size() == 8);

  Topology single = load_topology_file(fixture("a3-megagpu-8g.nccl.xml"));
  single.nics.resize(1);  // only the control NIC is left
  const NodePlan lonely = plan_node(single);
  CHECK(lonely.gpus[0].nics.empty());
  CHECK(lonely.gpus[0].nic_fallback);
  CHECK_THAT(lonely.gpus[0].nic_note, Catch::Contains("control NIC"));
  CHECK(lonely.data_nics.empty());
}

TEST_CASE("nested switches: NICs deeper with other GPUs are shared where they meet", "[binding]") {
  const auto a = PciAddress::parse("00:01.0"), b = PciAddress::parse("01:00.0"), c = PciAddress::parse("02:00.0"),
             d = PciAddress::parse("02:01.0");
  Topology t;
  t.gpus.resize(2);
  t.gpus[0].address = PciAddress::parse("03:00.0");
  t.gpus[0].switch_path = {a, b, c};  // shares switch c with the NIC
  t.gpus[1].address = PciAddress::parse("04:00.0");
  t.gpus[1].switch_path = {a, b, d};  // meets that NIC only at switch b
  t.nics.resize(1);
  t.nics[0].address = PciAddress::parse("05:00.0");
  t.nics[0].switch_path = {a, b, c};
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nics == std::vector<int>{0});
  CHECK(plan.gpus[1].nics == std::vector<int>{0});
  CHECK_FALSE(plan.gpus[1].nic_fallback);
  CHECK_FALSE(plan.control_nic);
}

TEST_CASE("bind_task: the GPUs' NICs and local CPUs within what Slurm allowed", "[binding]") {
  const Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  const NodePlan plan = plan_node(t);

  const TaskBinding one = bind_task(t, plan, {5}, t.all_cpus);
  CHECK(one.gpus == std::vector<int>{5});
  CHECK(one.cpus.to_list() == "52-103,156-207");
  CHECK(nic_names(t, one.nics) == std::vector<std::string>{"enp135s0"});
  CHECK(one.numa_nodes == std::vector<int>{1});
  CHECK(one.warning.empty());

  const TaskBinding two = bind_task(t, plan, {4, 3, 4}, t.all_cpus);
  CHECK(two.gpus == std::vector<int>{3, 4});
  CHECK(nic_names(t, two.nics) == std::vector<std::string>{"enp14s0", "enp134s0"});
  CHECK(two.cpus.count() == 208);
  CHECK(two.numa_nodes == std::vector<int>{0, 1});

  CHECK(bind_task(t, plan, {0}, CpuSet::parse_list("10-20,60-70")).cpus.to_list() == "10-20");
  CHECK(bind_task(t, plan, {0}, CpuSet{}).cpus.to_list() == "0-51,104-155");  // allowed set unknown

  const TaskBinding outside = bind_task(t, plan, {0}, CpuSet::parse_list("60-70"));
  CHECK(outside.cpus.to_list() == "60-70");
  CHECK_THAT(outside.warning, Catch::Contains("GPU(s) 0 (0-51,104-155) are outside the CPUs Slurm gave the task (60-70)"));

  CHECK_THROWS_WITH(bind_task(t, plan, {8}, t.all_cpus), Catch::Contains("GPU index 8") && Catch::Contains("has 8 GPUs"));
  CHECK_THROWS_WITH(bind_task(t, plan, {-1}, t.all_cpus), Catch::Contains("GPU index -1"));
  CHECK_THROWS_WITH(bind_task(t, NodePlan{}, {0}, t.all_cpus), Catch::Contains("plan covers 0 GPUs"));
}

TEST_CASE("bind_task on the 2-CPU local machine: CPU 0 for GPUs 0-3, CPU 1 for GPUs 4-7", "[binding]") {
  for (const std::string& form : kForms) {
    INFO(form);
    const Topology t = load_topology_file(fixture("local-a3mega-2cpu" + form));
    const NodePlan plan = plan_node(t);
    for (int g = 0; g < 8; ++g) {
      const TaskBinding b = bind_task(t, plan, {g}, CpuSet::parse_list("0-1"));
      CHECK(b.cpus.to_list() == (g < 4 ? "0" : "1"));
      CHECK(nic_names(t, b.nics) == std::vector<std::string>{kA3MegaNics[static_cast<std::size_t>(g)]});
    }
  }
}

TEST_CASE("one-H100 VM with only a control NIC: the GPU gets CPUs but no NIC, and the plan says why", "[binding]") {
  const Topology t = load_topology_file(fixture("captured-h100-vm-1gpu.xml"));
  const NodePlan plan = plan_node(t);
  REQUIRE(plan.control_nic);
  CHECK(nic_name(t, *plan.control_nic) == "eth0");
  CHECK(plan.gpus[0].nics.empty());
  CHECK(plan.gpus[0].nic_fallback);
  CHECK_THAT(plan.gpus[0].nic_note, Catch::Contains("only NIC is the control NIC"));
  const TaskBinding b = bind_task(t, plan, {0}, CpuSet::parse_list("2-5"));
  CHECK(b.cpus.to_list() == "2-5");
  CHECK(b.nics.empty());
}
