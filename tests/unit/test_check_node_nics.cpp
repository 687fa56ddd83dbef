#include <catch2/catch.hpp>

#include "check_node/nic_rules.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace gpudirect::launcher::check_node;
namespace fs = std::filesystem;

namespace {

// A fake sysfs tree: a NIC's operstate, carrier, mtu and speed; RDMA ports; NUMA nodes.
struct FakeSysfs {
  fs::path root = fs::temp_directory_path() / ("gpudirect-check-node-sysfs-" + std::to_string(::getpid()));
  FakeSysfs() { fs::remove_all(root); }
  ~FakeSysfs() { fs::remove_all(root); }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root / path).parent_path());
    std::ofstream(root / path) << text << "\n";
  }
  void nic(const std::string& name, const std::string& state, int mtu, int speed) {
    write("class/net/" + name + "/operstate", state);
    if (state == "up") write("class/net/" + name + "/carrier", "1");
    write("class/net/" + name + "/mtu", std::to_string(mtu));
    write("class/net/" + name + "/speed", std::to_string(speed));
  }
};

Expectations roce_node() {
  Expectations e;
  e.machine_type = "a3-ultragpu-8g";
  e.data_nics = {"gpu0rdma0", "gpu1rdma0", "gpu2rdma0"};
  e.data_nic_mtu = 8896;
  e.data_nic_speed_mbps = 400000;
  e.rdma_devices = 2;
  e.numa_nodes = 2;
  return e;
}

}  // namespace

TEST_CASE("NICs as expected in a fake sysfs give no finding", "[check_node]") {
  FakeSysfs sys;
  for (const char* nic : {"gpu0rdma0", "gpu1rdma0", "gpu2rdma0"}) sys.nic(nic, "up", 8896, 400000);
  sys.write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
  sys.write("class/infiniband/mlx5_1/ports/1/state", "4: ACTIVE");
  sys.write("devices/system/node/node0/cpulist", "0-3");
  sys.write("devices/system/node/node1/cpulist", "4-7");
  sys.write("devices/system/node/possible", "0-1");
  const SysfsView view = read_sysfs(sys.root.string(), roce_node().data_nics);
  REQUIRE(view.data_nics.size() == 3);
  CHECK(view.data_nics[0].present);
  CHECK(view.data_nics[0].mtu == 8896);
  CHECK(view.numa_nodes == 2);
  CHECK(view.rdma_ports.size() == 2);
  CHECK(judge_nics(view, roce_node()).empty());
}

TEST_CASE("a NIC down, missing, with another MTU or slower, and an RDMA port down are each named", "[check_node]") {
  FakeSysfs sys;
  sys.nic("gpu0rdma0", "down", 8896, -1);
  sys.nic("gpu1rdma0", "up", 1500, 200000);
  sys.write("class/infiniband/mlx5_0/ports/1/state", "1: DOWN");
  sys.write("devices/system/node/node0/cpulist", "0-3");
  const SysfsView view = read_sysfs(sys.root.string(), roce_node().data_nics);
  CHECK_FALSE(view.data_nics[0].speed_mbps.has_value());
  const auto findings = judge_nics(view, roce_node());
  std::vector<std::string> lines;
  for (const Finding& f : findings) lines.push_back(f.check + " " + f.subject + " " + f.measured);
  CHECK(lines == std::vector<std::string>{"nic_down data NIC gpu0rdma0 down", "nic_mtu data NIC gpu1rdma0 1500",
                                          "nic_speed data NIC gpu1rdma0 200000 Mb/s", "nic_missing data NIC gpu2rdma0 missing",
                                          "rdma_count RDMA devices 1", "rdma_port RDMA port mlx5_0/1 DOWN", "numa_nodes NUMA nodes 1"});
  CHECK(findings[1].fix == "ip link set gpu1rdma0 mtu 8896 (and the VPC's MTU: the A3 Mega blueprint sets 8244)");
  CHECK(findings[2].fault == Fault::performance);
  CHECK(findings[0].fault == Fault::configuration);
}

TEST_CASE("a NIC up without carrier is named", "[check_node]") {
  FakeSysfs sys;
  sys.nic("gpu0rdma0", "up", 8896, 400000);
  sys.write("class/net/gpu0rdma0/carrier", "0");
  Expectations e = roce_node();
  e.data_nics = {"gpu0rdma0"};
  e.rdma_devices.reset();
  e.numa_nodes.reset();
  const auto findings = judge_nics(read_sysfs(sys.root.string(), e.data_nics), e);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].check == "nic_no_carrier");
}

TEST_CASE("an MTU above the machine type's is named too", "[check_node]") {
  FakeSysfs sys;
  sys.nic("gpu0rdma0", "up", 9000, 400000);
  Expectations e = roce_node();
  e.data_nics = {"gpu0rdma0"};
  e.rdma_devices.reset();
  e.numa_nodes.reset();
  const auto findings = judge_nics(read_sysfs(sys.root.string(), e.data_nics), e);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].check == "nic_mtu");
  CHECK(findings[0].measured == "9000");
}
