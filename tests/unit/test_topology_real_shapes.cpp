// Reading the real-machine shapes (tests/fixtures/make_fixtures.py, REAL_SHAPES and NCCL_SHAPES):
// AMD GPU classes, NIC kinds, NUMA distances, packages, the file's host name, bare NCCL entries.
#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/nic_kind.hpp"
#include "gpudirect/topology_sources.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace gpudirect;

namespace {

std::string fixture(const std::string& name) { return gpudirect::testing::fixture_path(name); }

const Nic& nic_named(const Topology& t, const std::string& label) {
  for (const Nic& nic : t.nics)
    if (nic_label(nic) == label) return nic;
  FAIL("no NIC " << label);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("AMD Instinct GCDs of class 0x0380 are GPUs, hwloc's host name, packages and NUMA distances are kept", "[topology][real]") {
  const Topology t = load_topology_file(fixture("epyc-mi250x-nps4.xml"));
  REQUIRE(t.gpus.size() == 8);
  for (const Gpu& gpu : t.gpus) {
    CHECK(gpu.vendor == GpuVendor::amd);
    CHECK(gpu.device_id == 0x7408);
    CHECK(gpu.package == 0);
  }
  CHECK(t.gpus[0].address.to_string() == "0000:01:00.0");
  CHECK(t.gpus[0].numa_node == 2);  // bus 0x00-0x3f belongs to NUMA node 2 on this board
  CHECK(t.gpus[7].numa_node == 0);
  CHECK(t.host == "mi250x-node-01");
  CHECK(numa_distance(t, 0, 0) == 10);
  CHECK(numa_distance(t, 0, 3) == 12);
  CHECK(numa_distance(t, 0, -1) == 255);
  CHECK(nic_named(t, "hsn0").kind == NicKind::rdma);  // Slingshot: vendor 0x17db
  CHECK(nic_named(t, "eno1").kind == NicKind::management);
}

TEST_CASE("MI300X (class 0x1200) are GPUs, RoCE NICs are RDMA, BCM5720 management, E810 plain, VFs unusable", "[topology][real]") {
  const Topology t = load_topology_file(fixture("epyc-mi300x-8.xml"));
  REQUIRE(t.gpus.size() == 8);
  CHECK(t.gpus[4].vendor == GpuVendor::amd);
  CHECK(t.gpus[4].package == 1);
  CHECK(nic_named(t, "ens1np0/bnxt_re0").kind == NicKind::rdma);
  CHECK(nic_named(t, "eno2").kind == NicKind::management);
  CHECK(nic_named(t, "ens2f0").kind == NicKind::ethernet);
  const Nic vf = nic_named(t, "0000:e2:00.1");  // a copy: GCC 14's -Wdangling-reference misreads a reference here
  CHECK(vf.kind == NicKind::unusable);
  CHECK_THAT(vf.kind_reason, Catch::Contains("no netdev or RDMA device"));
  CHECK(numa_distance(t, 0, 1) == 32);
}

TEST_CASE("SNC4: eight NUMA nodes, two packages, the 10/12/21 matrix", "[topology][real]") {
  const Topology t = load_topology_file(fixture("xeon-snc4-ib.xml"));
  REQUIRE(t.gpus.size() == 4);
  CHECK(t.gpus[1].numa_node == 2);
  CHECK(t.gpus[1].package == 0);
  CHECK(t.gpus[2].package == 1);
  CHECK(numa_distance(t, 0, 1) == 12);
  CHECK(numa_distance(t, 0, 5) == 21);
  CHECK(numa_distance(t, 5, 5) == 10);
  const Nic hca = nic_named(t, "ibp34s0/mlx5_0");  // a copy, as above
  CHECK(hca.kind == NicKind::rdma);
  CHECK(hca.numa_node == 1);
  CHECK(nic_named(t, "0000:23:00.1").kind == NicKind::unusable);  // the HCA's driverless VF
}

TEST_CASE("POWER9: PCI domains per PHB, NUMA nodes 0 and 8, InfiniBand class 0x0207", "[topology][real]") {
  const Topology t = load_topology_file(fixture("power9-ib.xml"));
  REQUIRE(t.gpus.size() == 4);
  CHECK(t.gpus[2].address.to_string() == "0034:01:00.0");
  CHECK(t.gpus[2].numa_node == 8);
  CHECK(numa_distance(t, 0, 8) == 40);
  CHECK(nic_bus_id(nic_named(t, "ib1/mlx5_1")) == "0003:01:00.1");
  CHECK(nic_named(t, "enP1p1s0f3").kind == NicKind::management);
}

TEST_CASE("workstation: a VGA-class GeForce is a GPU, Wi-Fi is unusable, the 10GbE card plain", "[topology][real]") {
  const Topology t = load_topology_file(fixture("workstation-rtx.xml"));
  REQUIRE(t.gpus.size() == 1);
  CHECK(t.gpus[0].device_id == 0x2684);
  CHECK(nic_named(t, "wlp4s0").kind == NicKind::unusable);
  CHECK(nic_named(t, "eno1").kind == NicKind::management);
  CHECK(nic_named(t, "enp5s0").kind == NicKind::ethernet);
  CHECK(t.numa_distances.empty());
  CHECK(numa_distance(t, 0, 0) == 10);
}

TEST_CASE("Azure's ND file shape: vendor-less display-class GPUs and bare class-0x0207 HCAs", "[topology][real]") {
  const Topology t = load_topology_file(fixture("azure-ndv4-like.nccl.xml"));
  REQUIRE(t.gpus.size() == 8);
  REQUIRE(t.nics.size() == 8);
  CHECK(t.gpus[0].address.to_string() == "0001:00:00.0");
  CHECK(t.gpus[7].numa_node == 3);
  for (const Nic& nic : t.nics) {
    CHECK(nic.kind == NicKind::rdma);
    CHECK_FALSE(nic.names_listed);
    CHECK(nic_label(nic) == nic_bus_id(nic));  // offline: known by bus id only
  }
  CHECK(t.host.empty());
}

TEST_CASE("bare NCCL NICs get their names from this node's sysfs when the device is a NIC here", "[topology][real]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("gpudirect-sysfs-" + std::to_string(::getpid()));
  const fs::path hca = root / "bus/pci/devices/0101:00:00.0";
  fs::create_directories(hca / "net/ib0");
  fs::create_directories(hca / "infiniband/mlx5_ib0");
  std::ofstream(hca / "class") << "0x020700\n";
  const fs::path storage = root / "bus/pci/devices/0102:00:00.0";  // same bus id, not a NIC here
  fs::create_directories(storage / "net/eth9");
  std::ofstream(storage / "class") << "0x010802\n";

  Topology t = load_topology_file(fixture("azure-ndv4-like.nccl.xml"));
  resolve_nic_names(t, root.string());
  CHECK(t.nics[0].interface_name == "ib0");
  CHECK(t.nics[0].rdma_device == "mlx5_ib0");
  CHECK(nic_label(t.nics[0]) == "ib0/mlx5_ib0");
  CHECK(t.nics[0].kind == NicKind::rdma);
  CHECK(nic_label(t.nics[1]) == "0102:00:00.0");
  fs::remove_all(root);
}

TEST_CASE("an ATI ES1000 BMC VGA is not a GPU, and the topology says what it skipped", "[topology][real]") {
  CHECK_FALSE(is_gpu_class(0x0300, 0x1002, 0x515e));
  CHECK(is_gpu_class(0x0300, 0x1002, 0x744c));        // Radeon RX 7900 class GPU
  CHECK(is_gpu_class(0x0380, 0x1002, 0x740c));        // MI250
  CHECK(is_gpu_class(0x1200, 0x1002, 0x74a1));        // MI300X
  CHECK_FALSE(is_gpu_class(0x1200, 0x1da3, 0x1020));  // Habana Gaudi: an accelerator, not a GPU
  CHECK_FALSE(is_gpu_class(0x0300, 0x1a03, 0x2000));  // ASPEED
  CHECK(is_network_class(0x0c06));
  const Topology t = load_topology_file(fixture("gpu-less.xml"));
  REQUIRE(t.notes.size() == 1);
  CHECK_THAT(t.notes[0], Catch::Contains("1a03:2000") && Catch::Contains("not an NVIDIA or AMD GPU"));
}

TEST_CASE("NIC kinds: the rules in order", "[topology][real]") {
  const auto kind = [](auto setup) {
    Nic nic;
    nic.pci_class = 0x0200;
    nic.interface_name = "eth0";
    setup(nic);
    classify_nic(nic);
    return nic.kind;
  };
  CHECK(kind([](Nic&) {}) == NicKind::ethernet);
  CHECK(kind([](Nic& n) { n.pci_class = 0x0280; }) == NicKind::unusable);
  CHECK(kind([](Nic& n) { n.interface_name = "wlan0"; }) == NicKind::unusable);
  CHECK(kind([](Nic& n) { n.interface_name = "enx0c37965fe0ab"; }) == NicKind::unusable);
  CHECK(kind([](Nic& n) { n.interface_name.clear(); }) == NicKind::unusable);
  CHECK(kind([](Nic& n) {
          n.interface_name.clear();
          n.names_listed = false;
        }) == NicKind::ethernet);
  CHECK(kind([](Nic& n) { n.rdma_device = "mlx5_0"; }) == NicKind::rdma);
  CHECK(kind([](Nic& n) { n.pci_class = 0x0207; }) == NicKind::rdma);
  CHECK(kind([](Nic& n) { n.pci_class = 0x0208; }) == NicKind::rdma);
  CHECK(kind([](Nic& n) {
          n.vendor = 0x1d0f;
          n.device_id = 0xefa1;
        }) == NicKind::rdma);
  CHECK(kind([](Nic& n) {
          n.vendor = 0x1d0f;
          n.device_id = 0xec20;
        }) == NicKind::ethernet);  // ENA
  CHECK(kind([](Nic& n) {
          n.vendor = 0x8086;
          n.device_id = 0x1521;
        }) == NicKind::management);
  CHECK(kind([](Nic& n) { n.link_speed_gbs = 0.5f; }) == NicKind::management);
  CHECK(kind([](Nic& n) { n.link_speed_gbs = 0; }) == NicKind::ethernet);  // unknown speed
}
