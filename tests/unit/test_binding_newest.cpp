// The newest topologies (issue 32): ConnectX-8 SuperNIC nodes with bonded RoCE ports, a B200 VM with
// GPUs and NICs under host bridges in several PCI domains, a Kubernetes host's virtual interfaces.
// The files here are constructed from the facts the issue gives about those machines (not real dumps).
#include <catch2/catch.hpp>

#include "gpudirect/binding.hpp"
#include "gpudirect/topology_sources.hpp"
#include "temp_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace gpudirect;

namespace {

// The bus ids (or names) of GPU g's data NICs.
std::vector<std::string> nics_of(const Topology& t, const NodePlan& plan, std::size_t g) {
  std::vector<std::string> out;
  for (int n : plan.gpus[g].nics) out.push_back(nic_bus_id(t.nics[static_cast<std::size_t>(n)]));
  return out;
}

Topology load(const std::string& name, const std::string& xml) {
  const TempFile file(name, xml);
  return load_nccl_topology_xml(file.path());
}

}  // namespace

TEST_CASE("ConnectX-8 SuperNIC node: the bonded RoCE NIC on each GPU's switch carries its traffic, not the x2 CX-7 card",
          "[binding][newest]") {
  // Each GPU below the SuperNIC's switch next to its NIC function (15b3:1023, class 0x0200, ports
  // bonded: mlx5_bond_N); a CX-7 InfiniBand card (class 0x0207) on no GPU's switch.
  const Topology t = load("cx8.nccl.xml", R"(<system version="1">
  <cpu numaid="0" affinity="0000ffff">
    <pci busid="0000:10:00.0" class="0x060400" vendor="0x15b3" device="0x197b">
      <pci busid="0000:11:00.0" class="0x030200" vendor="0x10de" device="0x3182"><gpu dev="0" sm="100"/></pci>
      <pci busid="0000:12:00.0" class="0x020000" vendor="0x15b3" device="0x1023">
        <nic><net name="mlx5_bond_0" dev="0" speed="800000" port="1"/></nic>
      </pci>
    </pci>
    <pci busid="0000:20:00.0" class="0x060400" vendor="0x15b3" device="0x197b">
      <pci busid="0000:21:00.0" class="0x030200" vendor="0x10de" device="0x3182"><gpu dev="1" sm="100"/></pci>
      <pci busid="0000:22:00.0" class="0x020000" vendor="0x15b3" device="0x1023">
        <nic><net name="mlx5_bond_1" dev="1" speed="800000" port="1"/></nic>
      </pci>
    </pci>
    <pci busid="0000:05:00.0" class="0x020700" vendor="0x15b3" device="0x1021">
      <nic><net name="mlx5_0" dev="2" speed="200000" port="1"/></nic>
    </pci>
  </cpu>
</system>
)");
  REQUIRE(t.nics.size() == 3);
  CHECK(t.nics[1].rdma_device == "mlx5_bond_0");
  CHECK(t.nics[1].kind == NicKind::rdma);
  const NodePlan plan = plan_node(t);
  CHECK(nics_of(t, plan, 0) == std::vector<std::string>{"0000:12:00.0"});
  CHECK(nics_of(t, plan, 1) == std::vector<std::string>{"0000:22:00.0"});
  CHECK_FALSE(plan.gpus[0].nic_fallback);
}

TEST_CASE("a NIC at a quarter or less of its kind's fastest port speed carries no GPU traffic", "[binding][newest]") {
  // Two GPUs and four HCAs under the host bridge (no switch visible): two 100G front-end ports
  // first in bus order, then two 400G GPU ports.
  const Topology t = load("b200-speeds.nccl.xml", R"(<system version="1">
  <cpu numaid="0" affinity="0000ffff">
    <pci busid="0000:08:00.0" class="0x030200" vendor="0x10de" device="0x2901"><gpu dev="0" sm="100"/></pci>
    <pci busid="0000:09:00.0" class="0x030200" vendor="0x10de" device="0x2901"><gpu dev="1" sm="100"/></pci>
    <pci busid="0000:0a:00.0" class="0x020000" vendor="0x15b3" device="0x101d"><nic><net name="mlx5_0" speed="100000"/></nic></pci>
    <pci busid="0000:0b:00.0" class="0x020000" vendor="0x15b3" device="0x101d"><nic><net name="mlx5_1" speed="100000"/></nic></pci>
    <pci busid="0000:0c:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_2" speed="400000"/></nic></pci>
    <pci busid="0000:0d:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_3" speed="400000"/></nic></pci>
  </cpu>
</system>
)");
  const NodePlan plan = plan_node(t);
  CHECK(nics_of(t, plan, 0) == std::vector<std::string>{"0000:0c:00.0"});
  CHECK(nics_of(t, plan, 1) == std::vector<std::string>{"0000:0d:00.0"});
  CHECK(plan.data_nics.size() == 2);
}

TEST_CASE("hwloc link speed: an x2 NIC beside x16 ones of its kind carries no GPU traffic", "[binding][newest]") {
  Topology t;
  t.gpus.resize(1);
  t.gpus[0].address = PciAddress::parse("0000:40:00.0");
  t.gpus[0].numa_node = 0;
  t.nics.resize(2);
  const float link_gbs[] = {7.9f, 63.0f};  // PCIe Gen5 x2 and x16
  for (std::size_t n = 0; n < 2; ++n) {
    t.nics[n].address = PciAddress::parse(n == 0 ? "0000:05:00.0" : "0000:41:00.0");
    t.nics[n].rdma_device = "mlx5_" + std::to_string(n);
    t.nics[n].kind = NicKind::rdma;
    t.nics[n].numa_node = 0;
    t.nics[n].link_speed_gbs = link_gbs[n];
  }
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nics == std::vector<int>{1});

  t.nics[0].link_speed_gbs = 0;  // unknown speed: never called slow
  CHECK(plan_node(t).gpus[0].nics == std::vector<int>{0, 1});
}

TEST_CASE("no switch visible: a GPU takes the NICs of its own PCI domain before the NUMA fallback", "[binding][newest]") {
  // A VM's GPUs and fabric NICs each under their own host bridge in domains 0001 and 0002; the
  // front-end NICs (same kind, same speed, same NUMA node) in domain 0000, first in bus order.
  const Topology t = load("b200-domains.nccl.xml", R"(<system version="1">
  <cpu numaid="0" affinity="0000ffff">
    <pci busid="0000:0a:00.0" class="0x020000" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_0" speed="400000"/></nic></pci>
    <pci busid="0000:0b:00.0" class="0x020000" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_1" speed="400000"/></nic></pci>
    <pci busid="0001:00:00.0" class="0x030200" vendor="0x10de" device="0x2901"><gpu dev="0" sm="100"/></pci>
    <pci busid="0001:01:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_2" speed="400000"/></nic></pci>
    <pci busid="0002:00:00.0" class="0x030200" vendor="0x10de" device="0x2901"><gpu dev="1" sm="100"/></pci>
    <pci busid="0002:01:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_3" speed="400000"/></nic></pci>
  </cpu>
</system>
)");
  const NodePlan plan = plan_node(t);
  CHECK(nics_of(t, plan, 0) == std::vector<std::string>{"0001:01:00.0"});
  CHECK(nics_of(t, plan, 1) == std::vector<std::string>{"0002:01:00.0"});
  CHECK(plan.gpus[0].nic_fallback);
  CHECK_THAT(plan.gpus[0].nic_note, Catch::Contains("PCI domain 0001"));
}

TEST_CASE("Kubernetes host: virtual interfaces listed under every CPU are skipped, the file is read", "[topology][newest]") {
  const std::string virtuals = R"(<nic><net name="br-3f2a9c1d7e45"/><net name="docker0"/><net name="cali1a2b3c4d5e6"/>
      <net name="veth9f8e7d6"/><net name="flannel.1"/><net name="cni0"/><net name="vxlan.calico"/><net name="tunl0"/></nic>)";
  const Topology t = load("k8s.nccl.xml", R"(<system version="1">
  <cpu numaid="0" affinity="000000ff">
    <pci busid="0000:04:00.0" class="0x030200" vendor="0x10de" device="0x2330"><gpu dev="0" sm="90"/></pci>
    <pci busid="0000:05:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_0" speed="400000"/></nic></pci>
    )" + virtuals + R"(
  </cpu>
  <cpu numaid="1" affinity="0000ff00">
    )" + virtuals + R"(
  </cpu>
</system>
)");
  REQUIRE(t.nics.size() == 1);
  CHECK(t.nics[0].rdma_device == "mlx5_0");
  CHECK(plan_node(t).gpus[0].nics == std::vector<int>{0});
}

TEST_CASE("an NCCL cpu element without affinity is read, its GPU's CPUs unknown", "[topology][binding][newest]") {
  // NCCL fills affinity from /sys/devices/system/node/node<numaid>/cpumap, so it writes none for
  // numaid -1 (tests/fixtures/real/nccl/nccl-pr2202-gb10-dgx-spark.xml). Such a file was refused.
  const Topology t = load("gb10.nccl.xml", R"(<system version="1">
  <cpu numaid="-1" arch="arm64">
    <pci busid="000f:01:00.0" class="0x030000" vendor="0x10de" device="0x2e12"><gpu dev="0" sm="121"><c2c bw="43125" count="8"/></gpu></pci>
    <pci busid="0001:01:00.0" class="0x020000" vendor="0x15b3" device="0x1021"><nic><net name="rocep1s0f0" speed="200000"/></nic></pci>
    <pci busid="0002:01:00.0" class="0x020000" vendor="0x15b3" device="0x1021"><nic><net name="roceP2p1s0f0" speed="200000"/></nic></pci>
  </cpu>
</system>
)");
  REQUIRE(t.gpus.size() == 1);
  CHECK(t.gpus[0].numa_node == -1);
  CHECK(t.gpus[0].local_cpus.empty());
  CHECK(t.all_cpus.empty());
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].local_cpus.empty());

  // The task keeps the CPUs Slurm gave it, and says why, rather than binding to no CPU at all.
  const TaskBinding binding = bind_task(t, plan, {0}, CpuSet::parse_list("0-19"));
  CHECK(binding.cpus.to_list() == "0-19");
  CHECK_THAT(binding.warning, Catch::Contains("does not say which CPUs are local to GPU(s) 0"));
  CHECK(binding.numa_nodes.empty());
}

TEST_CASE("VPN tunnels such as tailscale0 and wg0 are host virtual interfaces, not NICs", "[topology][newest]") {
  const Topology t = load("vpn.nccl.xml", R"(<system version="1">
  <cpu numaid="0" affinity="000fffff" arch="arm64">
    <pci busid="000f:01:00.0" class="0x030000" vendor="0x10de" device="0x2e12"><gpu dev="0" sm="121"/></pci>
    <nic><net name="tailscale0" speed="10000"/><net name="wg0" speed="10000"/><net name="enP7s7" speed="10000"/></nic>
  </cpu>
</system>
)");
  REQUIRE(t.nics.size() == 1);
  CHECK(t.nics[0].interface_name == "enP7s7");
}

TEST_CASE("hwloc, Grace Hopper: the GPU's NUMA node is the Grace node, not its own memory's nodes", "[topology][binding][newest]") {
  // CONSTRUCTED in the shape hwloc gives an NVIDIA GPU whose memory the OS sees as NUMA nodes: the
  // GPU-memory node (subtype GPUMemory, PCIBusID) sits beside the CPU's node under the Package the
  // GPU hangs from (hwloc's own test nvidiagpunumanodes-kept, POWER9 + V100; on GH200 since hwloc
  // 2.11, where CSCS saw `hwloc-calc --intersect NUMAnode` of socket 0 give "0,4", eth-cscs/cscs-docs
  // pull request 179). Node 0: LPDDR5X with the CPUs; node 1: the GPU's HBM; nodes 2-8 without
  // memory, as lscpu shows a GH200's MIG nodes. No public GH200 lstopo export was found.
  const TempFile file("gh200.xml", R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x000000ff" complete_cpuset="0x000000ff" allowed_cpuset="0x000000ff" nodeset="0x000001ff" complete_nodeset="0x000001ff" allowed_nodeset="0x000001ff">
    <object type="Package" os_index="0" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x000001ff" complete_nodeset="0x000001ff">
      <object type="NUMANode" os_index="0" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000001" complete_nodeset="0x00000001" local_memory="1073741824"/>
      <object type="NUMANode" os_index="1" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000002" complete_nodeset="0x00000002" subtype="GPUMemory" local_memory="1073741824">
        <info name="PCIBusID" value="0009:01:00.0"/>
      </object>
      <object type="NUMANode" os_index="2" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000004" complete_nodeset="0x00000004"/>
      <object type="NUMANode" os_index="3" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000008" complete_nodeset="0x00000008"/>
      <object type="NUMANode" os_index="4" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000010" complete_nodeset="0x00000010"/>
      <object type="NUMANode" os_index="5" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000020" complete_nodeset="0x00000020"/>
      <object type="NUMANode" os_index="6" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000040" complete_nodeset="0x00000040"/>
      <object type="NUMANode" os_index="7" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000080" complete_nodeset="0x00000080"/>
      <object type="NUMANode" os_index="8" cpuset="0x000000ff" complete_cpuset="0x000000ff" nodeset="0x00000100" complete_nodeset="0x00000100"/>
      <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="PU" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="PU" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="PU" os_index="4" cpuset="0x00000010" complete_cpuset="0x00000010" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="PU" os_index="5" cpuset="0x00000020" complete_cpuset="0x00000020" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="PU" os_index="6" cpuset="0x00000040" complete_cpuset="0x00000040" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="PU" os_index="7" cpuset="0x00000080" complete_cpuset="0x00000080" nodeset="0x000001ff" complete_nodeset="0x000001ff"/>
      <object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0009:[01-01]">
        <object type="PCIDev" pci_busid="0009:01:00.0" pci_type="0302 [10de:2342] [10de:16eb] a1" pci_link_speed="63.015625"/>
      </object>
      <object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[01-01]">
        <object type="PCIDev" pci_busid="0000:01:00.0" pci_type="0207 [15b3:1021] [15b3:0041] 00" pci_link_speed="31.507812">
          <object type="OSDev" name="ibp1s0" osdev_type="2"/>
          <object type="OSDev" name="mlx5_0" osdev_type="3"/>
        </object>
      </object>
    </object>
  </object>
</topology>
)");
  const Topology t = load_hwloc_xml(file.path());
  REQUIRE(t.gpus.size() == 1);
  CHECK(t.gpus[0].numa_node == 0);
  CHECK(t.gpus[0].local_cpus.to_list() == "0-7");
  REQUIRE(t.nics.size() == 1);
  CHECK(t.nics[0].numa_node == 0);
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nics == std::vector<int>{0});
  CHECK(bind_task(t, plan, {0}, CpuSet{}).numa_nodes == std::vector<int>{0});
}

TEST_CASE("GB200 tray: NICs off the Grace PCIe serve the GPUs of their NUMA node", "[binding][newest]") {
  // CONSTRUCTED: on a GB200 compute tray every GPU (10de:2941, 0008:01:00.0 and 0009:01:00.0 per
  // NVIDIA's lspci examples) and every CX-7 sits alone under a root port of a Grace CPU, each in a PCI
  // domain of its own, so no GPU shares a switch or a domain with a NIC: the NUMA node decides.
  const Topology t = load("gb200-tray.nccl.xml", R"(<system version="1">
  <cpu numaid="0" affinity="000000ff" arch="arm64">
    <pci busid="0000:03:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_0" speed="400000"/></nic></pci>
    <pci busid="0002:03:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_1" speed="400000"/></nic></pci>
    <pci busid="0006:01:00.0" class="0x020000" vendor="0x15b3" device="0xa2dc"><nic><net name="enP6p1s0f0np0" speed="200000"/></nic></pci>
    <pci busid="0008:01:00.0" class="0x030200" vendor="0x10de" device="0x2941"><gpu dev="0" sm="100"/></pci>
    <pci busid="0009:01:00.0" class="0x030200" vendor="0x10de" device="0x2941"><gpu dev="1" sm="100"/></pci>
  </cpu>
  <cpu numaid="1" affinity="0000ff00" arch="arm64">
    <pci busid="0010:03:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_2" speed="400000"/></nic></pci>
    <pci busid="0012:03:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_3" speed="400000"/></nic></pci>
    <pci busid="0018:01:00.0" class="0x030200" vendor="0x10de" device="0x2941"><gpu dev="2" sm="100"/></pci>
    <pci busid="0019:01:00.0" class="0x030200" vendor="0x10de" device="0x2941"><gpu dev="3" sm="100"/></pci>
  </cpu>
</system>
)");
  const NodePlan plan = plan_node(t);
  CHECK(nics_of(t, plan, 0) == std::vector<std::string>{"0000:03:00.0"});
  CHECK(nics_of(t, plan, 1) == std::vector<std::string>{"0002:03:00.0"});
  CHECK(nics_of(t, plan, 2) == std::vector<std::string>{"0010:03:00.0"});
  CHECK(nics_of(t, plan, 3) == std::vector<std::string>{"0012:03:00.0"});
  CHECK(plan.gpus[0].local_cpus.to_list() == "0-7");
  CHECK(plan.gpus[3].local_cpus.to_list() == "8-15");
  REQUIRE(plan.control_nic);
  CHECK(nic_bus_id(t.nics[static_cast<std::size_t>(*plan.control_nic)]) == "0006:01:00.0");
}
