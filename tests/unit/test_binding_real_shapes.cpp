// Pairing on the real-machine shapes: the right NICs for every GPU and the right control NIC, as
// reasoned in tests/fixtures/make_fixtures.py for each fixture.
#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/binding.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"

#include <tuple>

using namespace gpudirect;

namespace {

std::string fixture(const std::string& name) { return gpudirect::testing::fixture_path(name); }

std::vector<std::string> labels(const Topology& t, const std::vector<int>& nics) {
  std::vector<std::string> out;
  for (int n : nics) out.push_back(nic_label(t.nics[static_cast<std::size_t>(n)]));
  return out;
}

using Labels = std::vector<std::string>;

void check_pairing(const std::string& file, const std::vector<Labels>& expected, const std::string& control) {
  INFO(file);
  const Topology t = load_topology_file(fixture(file));
  const NodePlan plan = plan_node(t);
  REQUIRE(plan.gpus.size() == expected.size());
  for (std::size_t g = 0; g < expected.size(); ++g) {
    INFO("GPU " << g);
    CHECK(labels(t, plan.gpus[g].nics) == expected[g]);
  }
  if (control.empty()) {
    CHECK_FALSE(plan.control_nic);
  } else {
    REQUIRE(plan.control_nic);
    CHECK(nic_label(t.nics[static_cast<std::size_t>(*plan.control_nic)]) == control);
  }
}

}  // namespace

TEST_CASE("MI250X NPS4, every device on its own root port: each NUMA node's GCDs share its Slingshot NIC", "[binding][real]") {
  check_pairing("epyc-mi250x-nps4.xml", {{"hsn0"}, {"hsn0"}, {"hsn1"}, {"hsn1"}, {"hsn2"}, {"hsn2"}, {"hsn3"}, {"hsn3"}}, "eno1");
  const Topology t = load_topology_file(fixture("epyc-mi250x-nps4.xml"));
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nic_fallback);
  CHECK_THAT(plan.gpus[0].nic_note, Catch::Contains("NUMA node 2"));
  CHECK(labels(t, plan.data_nics) == Labels{"hsn0", "hsn1", "hsn2", "hsn3"});
}

TEST_CASE("MI300X: the RoCE NIC on each GPU's switch, control NIC the plain E810, not the 1GbE or an RDMA NIC", "[binding][real]") {
  std::vector<Labels> expected;
  for (int i = 0; i < 8; ++i) expected.push_back({"ens" + std::to_string(i + 1) + "np0/bnxt_re" + std::to_string(i)});
  check_pairing("epyc-mi300x-8.xml", expected, "ens2f0");
}

TEST_CASE("SNC4: a GPU with no NIC on its NUMA node takes the same socket's HCA (distance 12), not the other's (21)", "[binding][real]") {
  check_pairing("xeon-snc4-ib.xml", {{"ibp34s0/mlx5_0"}, {"ibp34s0/mlx5_0"}, {"ibp162s0/mlx5_1"}, {"ibp162s0/mlx5_1"}}, "eno1");
  const Topology t = load_topology_file(fixture("xeon-snc4-ib.xml"));
  CHECK_THAT(plan_node(t).gpus[0].nic_note, Catch::Contains("NUMA node 1, distance 12"));
}

TEST_CASE("package breaks a NUMA-distance tie, without a matrix other nodes count as 20", "[binding][real]") {
  Topology t = load_topology_file(fixture("xeon-snc4-ib.xml"));
  t.numa_distances.clear();  // every other node at 20: the same package decides
  const NodePlan plan = plan_node(t);
  CHECK(labels(t, plan.gpus[1].nics) == Labels{"ibp34s0/mlx5_0"});
  CHECK(labels(t, plan.gpus[3].nics) == Labels{"ibp162s0/mlx5_1"});
}

TEST_CASE("POWER9: two GPUs and two IB ports of a socket pair 1:1, the BCM5719 ports carry none", "[binding][real]") {
  check_pairing("power9-ib.xml", {{"ib0/mlx5_0"}, {"ib1/mlx5_1"}, {"ib2/mlx5_2"}, {"ib3/mlx5_3"}}, "enP1p1s0f0");
}

TEST_CASE("workstation: the GPU gets the 10GbE card, never the Wi-Fi, the 1GbE port is the control NIC", "[binding][real]") {
  check_pairing("workstation-rtx.xml", {{"enp5s0"}}, "eno1");
}

TEST_CASE("Azure ND file shape: GPU 000k gets HCA 010k, no control NIC, and the plan says why", "[binding][real]") {
  std::vector<Labels> expected;
  for (int k = 1; k <= 8; ++k) {
    char bus[16];
    std::snprintf(bus, sizeof bus, "%04x:00:00.0", 0x100 + k);
    expected.push_back({bus});
  }
  check_pairing("azure-ndv4-like.nccl.xml", expected, "");
  const Topology t = load_topology_file(fixture("azure-ndv4-like.nccl.xml"));
  CHECK_THAT(plan_node(t).control_note, Catch::Contains("RDMA NIC"));
}

TEST_CASE("no NICs at all: no data NIC, no control NIC, and both notes say there are none", "[binding][real]") {
  const Topology t = load_topology_file(fixture("gpu-no-nic.nccl.xml"));
  const NodePlan plan = plan_node(t);
  CHECK_FALSE(plan.control_nic);
  CHECK(plan.control_note == "this node has no NICs");
  CHECK(plan.gpus[0].nics.empty());
  CHECK_THAT(plan.gpus[0].nic_note, Catch::Contains("there are no NICs"));
}

TEST_CASE("rdma mode names NICs by RDMA device, socket-based modes by netdev", "[binding][real]") {
  const Topology t = load_topology_file(fixture("power9-ib.xml"));
  const NodePlan plan = plan_node(t);
  TaskSetupInput in;
  in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
  in.request.mode = Mode::rdma;
  in.env = {{"SLURM_LOCALID", "1"}, {"SLURM_LOCAL_TASKS", "4"}, {"CUDA_VISIBLE_DEVICES", "1"}};
  const auto env = apply_env(plan_task(t, plan, in).env, {});
  CHECK(env.at("GPUDIRECT_NICS") == "mlx5_1");
  CHECK(env.at("NCCL_IB_HCA") == "=mlx5_1");
  CHECK(env.at("NCCL_SOCKET_IFNAME") == "enP1p1s0f0");

  const Topology mega = load_topology_file(fixture("a3-megagpu-8g.xml"));
  in.request.mode = Mode::tcpxo;
  in.facts.tcpxo_plugin = true;
  const auto tcpxo = apply_env(plan_task(mega, plan_node(mega), in).env, {});
  CHECK(tcpxo.at("GPUDIRECT_NICS") == "enp7s0");
}

TEST_CASE("tcpxo without a usable control NIC name says why instead of exporting an empty name", "[binding][real]") {
  Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  t.nics[0].interface_name.clear();  // enp0s12 known by bus id only
  const NodePlan plan = plan_node(t);
  TaskSetupInput in;
  in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
  in.request.mode = Mode::tcpxo;
  in.facts.tcpxo_plugin = true;
  in.env = {{"SLURM_LOCALID", "0"}, {"SLURM_LOCAL_TASKS", "8"}};
  CHECK_THROWS_WITH(plan_task(t, plan, in), Catch::Contains("CTRL_NIC") && Catch::Contains("0000:00:0c.0 has no network interface"));

  const Topology none = load_topology_file(fixture("gpu-no-nic.nccl.xml"));
  in.env = {{"SLURM_LOCALID", "0"}, {"SLURM_LOCAL_TASKS", "1"}};
  CHECK_THROWS_WITH(plan_task(none, plan_node(none), in), Catch::Contains("there are no NICs"));
}

TEST_CASE("real dumps: the only RDMA HCA carries GPU traffic and is never the control NIC (Azure NDv2, an A100 dual-port node)",
          "[binding][real]") {
  // Files taken unchanged from public sources (tests/fixtures/real/SOURCES.nccl); the HCA hangs off
  // no GPU's switch, so only the rule "never RDMA" keeps it out of the control NIC's place.
  for (const auto& [file, hca, gpus] : {std::tuple<std::string, std::string, std::size_t>{"azure-ndv2-topo.xml", "0101:00:00.0", 8},
                                        {"nccl-issue2397-a100-dualport.xml", "0000:16:00.0", 2}}) {
    INFO(file);
    const Topology t = load_topology_file(fixture("real/nccl/" + file));
    const NodePlan plan = plan_node(t);
    REQUIRE(plan.gpus.size() == gpus);
    for (const GpuPlacement& gpu : plan.gpus) {
      REQUIRE(gpu.nics.size() == 1);
      const Nic& nic = t.nics[static_cast<std::size_t>(gpu.nics[0])];
      REQUIRE(nic.address);
      CHECK(nic.address->to_string() == hca);
    }
    if (plan.control_nic) CHECK(t.nics[static_cast<std::size_t>(*plan.control_nic)].kind != NicKind::rdma);
  }
}
