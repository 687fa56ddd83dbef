#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/binding.hpp"
#include "gpudirect/topology_sources.hpp"
#include "temp_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

using namespace gpudirect;

namespace {

std::string fixture(const std::string& name) { return gpudirect::testing::fixture_path(name); }

std::string bus_of(const Gpu& gpu) { return gpu.address.to_string(); }
std::string bus_of(const Nic& nic) { return nic_bus_id(nic); }

std::vector<std::string> addresses(const auto& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(bus_of(d));
  return out;
}

std::vector<std::string> path_text(const std::vector<PciAddress>& path) {
  std::vector<std::string> out;
  for (const auto& a : path) out.push_back(a.to_string());
  return out;
}

const std::vector<std::string> kA3MegaGpus{"0000:04:00.0", "0000:05:00.0", "0000:0b:00.0", "0000:0c:00.0",
                                           "0000:84:00.0", "0000:85:00.0", "0000:8b:00.0", "0000:8c:00.0"};
const std::vector<std::string> kA3MegaNics{"enp0s12",  "enp6s0",   "enp7s0",   "enp13s0", "enp14s0",
                                           "enp134s0", "enp135s0", "enp141s0", "enp142s0"};

}  // namespace

TEST_CASE("A3 Mega in both forms: GPUs, NICs, NUMA nodes and CPUs", "[topology]") {
  for (const char* file : {"a3-megagpu-8g.xml", "a3-megagpu-8g.nccl.xml"}) {
    INFO(file);
    const Topology t = load_topology_file(fixture(file));
    CHECK(addresses(t.gpus) == kA3MegaGpus);
    std::vector<std::string> names;
    for (const Nic& nic : t.nics) names.push_back(nic.interface_name);
    CHECK(names == kA3MegaNics);
    CHECK(addresses(t.nics).front() == "0000:00:0c.0");
    CHECK(t.all_cpus.to_list() == "0-207");
    for (std::size_t g = 0; g < t.gpus.size(); ++g) {
      CHECK(t.gpus[g].vendor == GpuVendor::nvidia);
      CHECK(t.gpus[g].device_id == 0x2330);
      CHECK(t.gpus[g].numa_node == (g < 4 ? 0 : 1));
      CHECK(t.gpus[g].local_cpus.to_list() == (g < 4 ? "0-51,104-155" : "52-103,156-207"));
      CHECK_FALSE(t.gpus[g].switch_path.empty());
    }
    for (const Nic& nic : t.nics) CHECK(nic.rdma_device.empty());
    CHECK(t.nics.front().switch_path.empty());  // the control NIC hangs on the root complex
  }
}

TEST_CASE("switch paths: the hwloc chain of bridges, NCCL's one <pci> per switch", "[topology]") {
  const Topology hw = load_hwloc_xml(fixture("a3-megagpu-8g.xml"));
  // Root port, switch upstream port, then the GPU's own downstream port.
  CHECK(path_text(hw.gpus[0].switch_path) == std::vector<std::string>{"0000:00:01.0", "0000:02:00.0", "0000:03:00.0"});
  CHECK(path_text(hw.nics[1].switch_path) == std::vector<std::string>{"0000:00:01.0", "0000:02:00.0", "0000:03:02.0"});
  CHECK(shared_switch_depth(hw.gpus[0].switch_path, hw.nics[1].switch_path) == 2);
  CHECK(shared_switch_depth(hw.gpus[0].switch_path, hw.nics[3].switch_path) == 0);  // other switch
  CHECK(hw.source == "hwloc-xml:" + fixture("a3-megagpu-8g.xml"));

  const Topology nccl = load_nccl_topology_xml(fixture("a3-megagpu-8g.nccl.xml"));
  CHECK(path_text(nccl.gpus[0].switch_path) == std::vector<std::string>{"0000:02:00.0"});
  CHECK(shared_switch_depth(nccl.gpus[0].switch_path, nccl.nics[1].switch_path) == 1);
  CHECK(nccl.source == "nccl-xml:" + fixture("a3-megagpu-8g.nccl.xml"));
}

TEST_CASE("shared_switch_depth counts the common bridges from the root", "[topology]") {
  const auto a = PciAddress::parse("00:01.0"), b = PciAddress::parse("02:00.0"), c = PciAddress::parse("03:00.0"),
             d = PciAddress::parse("03:01.0");
  CHECK(shared_switch_depth({}, {}) == 0);
  CHECK(shared_switch_depth({a, b, c}, {a, b, d}) == 2);
  CHECK(shared_switch_depth({a, b}, {a, b, c}) == 2);
  CHECK(shared_switch_depth({b, c}, {a, b, c}) == 0);  // same bridges at another depth do not count
}

TEST_CASE("A3 High, p5-like, ND-like and the 2-CPU local machine load in both forms", "[topology]") {
  for (const char* machine : {"a3-highgpu-8g", "p5-like", "nd-h100-v5-like", "local-a3mega-2cpu"}) {
    for (const char* form : {".xml", ".nccl.xml"}) {
      const std::string file = std::string(machine) + form;
      INFO(file);
      const Topology t = load_topology_file(fixture(file));
      CHECK(t.gpus.size() == 8);
      const std::string m = machine;
      if (m == "a3-highgpu-8g") {
        CHECK(t.nics.size() == 5);
        CHECK(addresses(t.gpus) == std::vector<std::string>{"0000:04:00.0", "0000:05:00.0", "0000:0a:00.0", "0000:0b:00.0", "0000:84:00.0",
                                                            "0000:85:00.0", "0000:8a:00.0", "0000:8b:00.0"});
        CHECK(t.all_cpus.count() == 208);
      } else if (m == "p5-like") {
        CHECK(t.nics.size() == 33);  // 32 EFA + the ENA NIC; the four NVSwitches are neither
        CHECK(t.all_cpus.to_list() == "0-191");
        CHECK(t.gpus[7].numa_node == 0);
        for (std::size_t n = 1; n < t.nics.size(); ++n) {
          CHECK(t.nics[n].rdma_device.starts_with("rdmap"));
          CHECK(t.nics[n].interface_name.empty());  // EFA has no netdev
        }
      } else if (m == "nd-h100-v5-like") {
        CHECK(t.nics.size() == 9);
        CHECK(t.all_cpus.to_list() == "0-95");
        CHECK(t.gpus[3].local_cpus.to_list() == "0-47");
        CHECK(t.gpus[4].local_cpus.to_list() == "48-95");
        CHECK(t.nics[1].rdma_device == "mlx5_0");
        // hwloc sees the IPoIB netdev too; NCCL's file names only what its IB plugin uses.
        CHECK(t.nics[1].interface_name == (std::string(form) == ".xml" ? "ib0" : ""));
      } else {
        CHECK(t.all_cpus.to_list() == "0-1");
        CHECK(t.gpus[0].local_cpus.to_list() == "0");
        CHECK(t.gpus[7].local_cpus.to_list() == "1");
        CHECK(t.gpus[7].numa_node == 1);
      }
    }
  }
}

TEST_CASE("a node without GPUs is valid, non-NVIDIA/AMD display devices are not GPUs", "[topology]") {
  for (const char* file : {"gpu-less.xml", "gpu-less.nccl.xml"}) {
    INFO(file);
    const Topology t = load_topology_file(fixture(file));
    CHECK(t.gpus.empty());  // the ASPEED BMC VGA (1a03:2000, class 0x0300) does not count
    REQUIRE(t.nics.size() == 1);
    CHECK(t.nics[0].interface_name == "eth0");
    CHECK(t.nics[0].numa_node == 0);
    CHECK(t.all_cpus.to_list() == "0-7");
  }
}

TEST_CASE("live topology loads on this machine", "[topology]") {
  const Topology t = load_live_topology();
  CHECK(t.source == "hwloc");
  CHECK(t.all_cpus.count() >= 1);
  CHECK(t.all_cpus.count() >= static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  for (const Gpu& gpu : t.gpus) CHECK(!gpu.local_cpus.empty());
  for (const Nic& nic : t.nics) CHECK((nic.local_cpus & t.all_cpus) == nic.local_cpus);
}

TEST_CASE("malformed topology files are TopologyErrors that name the file", "[topology]") {
  const std::vector<std::pair<const char*, const char*>> cases{
      {"malformed-truncated.xml", "not well-formed XML"},
      {"malformed-truncated.nccl.xml", "not well-formed XML"},
      {"malformed-not-xml.xml", "not well-formed XML"},
      {"malformed-empty.xml", "empty"},
      {"malformed-wrong-root.xml", "<inventory>"},
      {"malformed-pcidev-no-busid.xml", "no pci_busid"},
      {"malformed-pci-no-busid.nccl.xml", "no busid"},
      {"malformed-bad-busid.nccl.xml", "invalid PCI address '0000:4g:00.0'"},
      {"malformed-bad-affinity.nccl.xml", "invalid CPU mask 'zz,ffff'"},
      {"malformed-gpu-outside-pci.nccl.xml", "no PCI bus id"},
      {"does-not-exist.xml", "cannot open"},
  };
  for (const auto& [file, why] : cases) {
    INFO(file);
    CHECK_THROWS_AS(load_topology_file(fixture(file)), TopologyError);
    CHECK_THROWS_WITH(load_topology_file(fixture(file)), Catch::Contains(fixture(file)) && Catch::Contains(why));
  }
  // Asking for one format and getting the other.
  CHECK_THROWS_WITH(load_hwloc_xml(fixture("a3-megagpu-8g.nccl.xml")), Catch::Contains("not hwloc XML"));
  CHECK_THROWS_WITH(load_nccl_topology_xml(fixture("a3-megagpu-8g.xml")), Catch::Contains("not NCCL topology XML"));
  CHECK_THROWS_WITH(load_hwloc_xml(fixture("malformed-pcidev-no-busid.xml")), Catch::Contains("line 8"));
}

TEST_CASE("a PU or NUMA node without a small os_index is refused before hwloc sizes a bitmap for it", "[topology]") {
  // Found by fuzzing (tests/fuzz/regressions/hwloc_xml/timeout-*): a PU whose os_index attribute is
  // misspelt made hwloc 2.9 take index 2^32-1 and spend seconds and half a GiB on one load.
  std::ifstream in(fixture("workstation-rtx.xml"));
  const std::string good{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string pu = "<object type=\"PU\" os_index=\"13\"";
  REQUIRE(good.find(pu) != std::string::npos);
  for (const auto& [replacement, why] : std::vector<std::pair<std::string, std::string>>{
           {"<object type=\"PU\" osX_index=\"13\"", "a PU object needs an os_index from 0 to 1048576; save the file again"},
           {"<object type=\"PU\" os_index=\"4294967295\"", "not '4294967295'"},
           {"<object type=\"PU\" os_index=\"-1\"", "not '-1'"}}) {
    std::string bad = good;
    bad.replace(bad.find(pu), pu.size(), replacement);
    const TempFile file("pu-index.xml", bad);
    CHECK_THROWS_WITH(load_hwloc_xml(file.path()), Catch::Contains(file.path() + ": line ") && Catch::Contains(why));
  }
}

TEST_CASE("a bridge type hwloc never writes is refused before hwloc stores it in its enum", "[topology]") {
  // Found by fuzzing (tests/fuzz/regressions/hwloc_xml/crash-747d9ebb...): bridge_type="2-1" became
  // an upstream type no enumerator has, which UBSan reports where the bridge chain is read.
  std::ifstream in(fixture("a3-highgpu-8g.xml"));
  const std::string good{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string pci_bridge = "bridge_type=\"1-1\"";
  REQUIRE(good.find(pci_bridge) != std::string::npos);
  CHECK(load_hwloc_xml(TempFile("bridges.xml", good).path()).gpus.size() == 8);
  {  // Found by fuzzing (leak-8e93cc72...): hwloc 2.9 leaks a bridge without its bus range.
    std::string bad = good;
    const std::size_t at = bad.find(" bridge_pci=\"", bad.find(pci_bridge));
    REQUIRE(at != std::string::npos);
    bad.replace(at + 1, 10, "cache_line");
    const TempFile file("bridge-range.xml", bad);
    CHECK_THROWS_WITH(load_hwloc_xml(file.path()), Catch::Contains("a Bridge object has no bridge_pci attribute"));
  }
  for (const std::string replacement : {"bridge_type=\"2-1\"", "bridge_type=\"1-0\"", "bridge_type=\"1-1x\""}) {
    std::string bad = good;
    bad.replace(bad.find(pci_bridge), pci_bridge.size(), replacement);
    const TempFile file("bridge-type.xml", bad);
    CHECK_THROWS_WITH(load_hwloc_xml(file.path()),
                      Catch::Contains(file.path() + ": line ") && Catch::Contains("(hwloc writes 0-1 or 1-1)"));
  }
}

TEST_CASE("a cpuset or nodeset that is no hwloc bitmap is refused before hwloc leaks its object", "[topology]") {
  // Found by fuzzing (tests/fuzz/regressions/hwloc_xml/leak-ea64702a...): complete_cpuset="0x0000008>8".
  std::ifstream in(fixture("workstation-rtx.xml"));
  const std::string good{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string pu = "<object type=\"PU\" os_index=\"13\"";
  REQUIRE(good.find(pu) != std::string::npos);
  for (const std::string set : {"cpuset=\"0x0000008>8\"", "cpuset=\"\"", "cpuset=\"0x\"", "cpuset=\",0x1\"", "cpuset=\"0x1,\"",
                                "cpuset=\"0x1,,\"", "cpuset=\"0x123456789\"", "cpuset=\"0x1,0xf...f\""}) {
    std::string bad = good;
    const std::size_t at = bad.find(" cpuset=\"", bad.find(pu)) + 1;  // the PU's own cpuset
    bad.replace(at, bad.find('"', at + 8) + 1 - at, set);
    const TempFile file("bitmap.xml", bad);
    CHECK_THROWS_WITH(load_hwloc_xml(file.path()), Catch::Contains(file.path() + ": line ") && Catch::Contains("is not an hwloc bitmap"));
  }
}

TEST_CASE("hwloc's own bitmap forms load: zero words written empty, a missing complete set", "[topology]") {
  // hwloc_bitmap_snprintf writes a zero 32-bit word between two others as nothing: lstopo files of
  // machines with more than 64 threads carry cpusets like "0x000000ff,,0x0" (issue 22).
  std::ifstream in(fixture("workstation-rtx.xml"));
  const std::string good{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const Topology plain = load_hwloc_xml(fixture("workstation-rtx.xml"));
  REQUIRE(!plain.gpus.empty());
  const std::string machine = "<object type=\"Machine\"";
  REQUIRE(good.find(machine) != std::string::npos);
  const auto with_machine_attribute = [&](const std::string& name, const std::string& value) {
    std::string text = good;
    const std::size_t at = text.find(" " + name + "=\"", text.find(machine)) + 1;
    REQUIRE(at < text.find('>', text.find(machine)));
    text.replace(at, text.find('"', at + name.size() + 2) + 1 - at, name + "=\"" + value + "\"");
    return text;
  };
  SECTION("empty inner words are zero words") {
    // CPUs 64-71 and 0 on a machine whose PUs the file does not list there: the machine's cpusets
    // alone change, and the GPUs' local CPUs must not.
    const TempFile file("empty-words.xml", with_machine_attribute("allowed_cpuset", "0x000000ff,,0x0000ffff"));
    const Topology t = load_hwloc_xml(file.path());
    CHECK(t.gpus.size() == plain.gpus.size());
    CHECK(t.gpus[0].local_cpus == plain.gpus[0].local_cpus);
  }
  SECTION("a cpuset without its complete_cpuset") {
    std::string text = good;
    const std::size_t object = text.find(machine);
    const std::size_t at = text.find(" complete_cpuset=\"", object);
    text.erase(at, text.find('"', at + 18) + 1 - at);
    const TempFile file("no-complete.xml", text);
    const Topology t = load_hwloc_xml(file.path());
    CHECK(t.gpus.size() == plain.gpus.size());
    CHECK(t.all_cpus == plain.all_cpus);
  }
}

TEST_CASE("hwloc 1.x NUMA distances are read, a malformed matrix is refused with its line", "[topology]") {
  // A real hwloc 1.11 file (flux-core's corona40): <distances> inside the machine object.
  const std::string real = fixture("real/hwloc/flux-core-hwloc-1.11.11.xml");
  const Topology t = load_hwloc_xml(real);
  CHECK(numa_distance(t, 0, 1) == 16);
  CHECK(numa_distance(t, 0, 4) == 32);
  std::ifstream in(real);
  const std::string good{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string latency = "<latency value=\"1.600000\"/>";
  REQUIRE(good.find(latency) != std::string::npos);
  std::string short_matrix = good;
  short_matrix.erase(short_matrix.find(latency), latency.size());
  const TempFile missing("v1-distances-short.xml", short_matrix);
  CHECK_THROWS_WITH(load_hwloc_xml(missing.path()),
                    Catch::Contains(missing.path() + ": line ") && Catch::Contains("has 63 latencies, expected 64"));
  std::string odd_value = good;
  odd_value.replace(odd_value.find(latency), latency.size(), "<latency value=\"1e999\"/>");
  const TempFile odd("v1-distances-odd.xml", odd_value);
  CHECK_THROWS_WITH(load_hwloc_xml(odd.path()), Catch::Contains("holds only <latency value="));
}

TEST_CASE("the sniffer reads the root element, not text that looks like one", "[topology]") {
  const TempFile commented("commented.xml",
                           "<?xml version=\"1.0\"?>\n<!-- an hwloc file would start with <topology> -->\n"
                           "<system version=\"1\"><cpu numaid=\"0\" affinity=\"3\">"
                           "<pci busid=\"0000:04:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"0\"/></pci>"
                           "</cpu></system>\n");
  const Topology t = load_topology_file(commented.path());
  CHECK(t.source == "nccl-xml:" + commented.path());
  CHECK(t.gpus.size() == 1);
}

TEST_CASE("NCCL XML details: domains, 16-bit classes, vendor-less GPUs, RDMA names, nested switches", "[topology]") {
  const TempFile file("details.nccl.xml", R"(<system version="1">
  <cpu numaid="1" affinity="0000ff00" arch="x86_64">
    <pci busid="ffff:ff:01.0" class="0x060400">
      <pci busid="0001:00:00.0" class="0x030200"><gpu dev="0"/></pci>
      <pci busid="0101:00:00.0" class="0x020700"><nic><net name="mlx5_ib0" port="1"/></nic></pci>
    </pci>
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x060400">
        <pci busid="0000:12:00.0" class="0x0302" vendor="0x1002" device="0x740f"/>
        <pci busid="0000:13:00.0" class="0x020000" vendor="0x15b3"><nic><net name="rocep19s0"/><net name="ens19"/></nic></pci>
      </pci>
    </pci>
    <pci busid="0000:20:00.0" class="0x030000" vendor="0x1a03" device="0x2000"/>
  </cpu>
</system>
)");
  const Topology t = load_nccl_topology_xml(file.path());
  REQUIRE(t.gpus.size() == 2);
  CHECK(t.gpus[0].address.to_string() == "0000:12:00.0");
  CHECK(t.gpus[0].vendor == GpuVendor::amd);
  CHECK(t.gpus[0].device_id == 0x740f);
  CHECK(path_text(t.gpus[0].switch_path) == std::vector<std::string>{"0000:10:00.0", "0000:11:00.0"});
  CHECK(t.gpus[1].address.to_string() == "0001:00:00.0");  // marked <gpu>, no vendor attribute
  CHECK(t.gpus[1].vendor == GpuVendor::nvidia);
  CHECK(t.gpus[1].numa_node == 1);
  CHECK(t.gpus[1].local_cpus.to_list() == "8-15");
  REQUIRE(t.nics.size() == 2);
  CHECK(t.nics[0].rdma_device == "rocep19s0");
  CHECK(t.nics[0].interface_name == "ens19");
  CHECK(t.nics[1].rdma_device == "mlx5_ib0");  // InfiniBand class: an RDMA device whatever the name
  CHECK(t.nics[1].interface_name.empty());
}

TEST_CASE("NCCL XML: NICs with no PCI function under <cpu>, numaid -1, <net> without dev", "[topology]") {
  // NCCL puts every NIC without a PCI device in one <nic> under the first <cpu> (issue 22: Azure
  // NC-class VMs); it writes numaid="-1" where the kernel knows no NUMA node.
  const TempFile file("virtual-nics.nccl.xml", R"(<system version="1">
  <cpu numaid="-1" affinity="0000000f" arch="x86_64">
    <pci busid="0001:00:00.0" class="0x030200" link_speed="" link_width="0"><gpu dev="0"/></pci>
    <nic>
      <net name="eth0" port="1" speed="40000"/>
      <net name="mlx5_0" dev="1" port="1" speed="40000"/>
    </nic>
  </cpu>
  <cpu numaid="1" affinity="000000f0" arch="x86_64">
    <pci busid="0002:00:00.0" class="0x030200"><gpu dev="1"/></pci>
  </cpu>
</system>
)");
  const Topology t = load_nccl_topology_xml(file.path());
  REQUIRE(t.gpus.size() == 2);
  CHECK(t.gpus[0].numa_node == -1);
  CHECK(t.gpus[0].local_cpus.to_list() == "0-3");
  CHECK(t.gpus[1].numa_node == 1);
  REQUIRE(t.nics.size() == 2);
  for (const Nic& nic : t.nics) {
    CHECK(!nic.address);
    CHECK(nic.switch_path.empty());
    CHECK(nic.local_cpus.to_list() == "0-3");
    CHECK(nic.numa_node == -1);
    CHECK(nic_bus_id(nic) == "-");
  }
  CHECK(t.nics[0].interface_name == "eth0");
  CHECK(t.nics[0].kind == NicKind::ethernet);
  CHECK(t.nics[1].rdma_device == "mlx5_0");
  CHECK(t.nics[1].kind == NicKind::rdma);
  // The RDMA NIC is the data NIC of every GPU (nothing is closer); eth0 is the control NIC.
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nics == std::vector<int>{1});
  CHECK(plan.gpus[1].nics == std::vector<int>{1});
  CHECK(plan.control_nic == 0);

  const TempFile twice("virtual-twice.nccl.xml",
                       "<system version=\"1\"><cpu numaid=\"0\" affinity=\"3\"><nic><net name=\"eth1\"/></nic>"
                       "<nic><net name=\"eth1\"/></nic></cpu></system>\n");
  CHECK_THROWS_WITH(load_nccl_topology_xml(twice.path()), Catch::Contains("NIC eth1 is listed twice"));
  const TempFile outside("nic-outside-cpu.nccl.xml",
                         "<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"3\"/>\n<nic><net name=\"eth1\"/></nic></system>\n");
  CHECK_THROWS_WITH(load_nccl_topology_xml(outside.path()),
                    Catch::Contains(outside.path() + ": line 3: <nic> inside <system> is outside any <cpu>"));
  const TempFile nameless("nameless-net.nccl.xml",
                          "<system version=\"1\"><cpu numaid=\"0\" affinity=\"3\">\n<nic><net dev=\"0\"/></nic></cpu></system>\n");
  CHECK_THROWS_WITH(load_nccl_topology_xml(nameless.path()), Catch::Contains(nameless.path() + ": line 2: <net> has no name attribute"));
}

TEST_CASE("NCCL XML: HCAs behind a VM's host bridge, ports of one guid, a dump that fuses several hosts", "[topology]") {
  // A B200 VM (tests/fixtures/real/nccl/modal-gvisor-b200-vm.xml): NCCL found no PCI function for the
  // HCAs and lists them in one <nic> inside the host bridge of their PCI domain.
  const TempFile vm("bridge-nics.nccl.xml", R"(<system version="1">
  <cpu numaid="0" affinity="0000000f" arch="x86_64">
    <pci busid="0000:00:00.0" class="0x060000" link_speed="" link_width="0">
      <nic>
        <net name="mlx5_0" port="1" speed="100000" guid="0xaa"/>
        <net name="mlx5_1" port="2" speed="100000" guid="0xaa"/>
        <net name="mlx5_4" port="5" speed="200000" guid="0xbb"/>
      </nic>
    </pci>
    <pci busid="0002:00:00.0" class="0x060000">
      <nic>
        <net name="mlx5_5" speed="400000" guid="0x15"/>
        <net name="mlx5_6" speed="400000" guid="0x16"/>
      </nic>
    </pci>
    <pci busid="0002:00:01.0" class="0x030200" vendor="0x10de"><gpu dev="0"/></pci>
    <pci busid="0002:00:02.0" class="0x030200" vendor="0x10de"><gpu dev="1"/></pci>
  </cpu>
</system>
)");
  const Topology t = load_nccl_topology_xml(vm.path());
  REQUIRE(t.nics.size() == 4);  // mlx5_0 and mlx5_1 share a guid: two ports of one HCA
  CHECK(nic_label(t.nics[0]) == "mlx5_0");
  CHECK(nic_label(t.nics[1]) == "mlx5_4");
  CHECK(nic_label(t.nics[2]) == "mlx5_5");
  CHECK(nic_label(t.nics[3]) == "mlx5_6");
  for (const Nic& nic : t.nics) {
    CHECK(!nic.address);
    CHECK(nic.kind == NicKind::rdma);
  }
  CHECK(t.nics[0].pci_domain == 0u);
  CHECK(t.nics[2].pci_domain == 2u);
  CHECK(path_text(t.nics[2].switch_path) == std::vector<std::string>{"0002:00:00.0"});
  // The 100G HCA is a quarter of the 400G ones; the data NICs (200G in 0000, 400G in 0002) span two
  // domains, so each GPU takes an HCA of its own domain, one each.
  const NodePlan plan = plan_node(t);
  CHECK(plan.gpus[0].nics == std::vector<int>{2});
  CHECK(plan.gpus[1].nics == std::vector<int>{3});
  CHECK_THAT(plan.gpus[0].nic_note, Catch::Contains("PCI domain 0002"));

  // A GB300 NVL72 dump with multi-node NVLink: every host's <cpu>s, the same bus ids in each.
  const char* host_cpu = R"(<cpu host_hash="%s" numaid="0" affinity="3" arch="arm64">
    <pci busid="0008:06:00.0" class="0x030200" vendor="0x10de"><gpu dev="0"/></pci></cpu>)";
  char first[512], second[512];
  std::snprintf(first, sizeof first, host_cpu, "0xa1");
  std::snprintf(second, sizeof second, host_cpu, "0xb2");
  const TempFile fused("fused.nccl.xml", std::string("<system version=\"1\">") + first + second + "</system>\n");
  const Topology f = load_nccl_topology_xml(fused.path());
  CHECK(f.gpus.size() == 1);
  CHECK_THAT(f.source, Catch::EndsWith("(the first of 2 hosts the file fuses: host_hash 0xa1)"));
}

TEST_CASE("NCCL XML without <cpu>, with entities or duplicate devices is refused", "[topology]") {
  const TempFile empty_system("nocpu.nccl.xml", "<system version=\"1\"></system>\n");
  CHECK_THROWS_WITH(load_topology_file(empty_system.path()), Catch::Contains("no <cpu>"));
  const TempFile entities("entities.nccl.xml",
                          "<?xml version=\"1.0\"?>\n<!DOCTYPE system [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;\">]>\n"
                          "<system version=\"1\"><cpu numaid=\"0\" affinity=\"&b;\"/></system>\n");
  CHECK_THROWS_WITH(load_topology_file(entities.path()), Catch::Contains("entities"));
  const TempFile twice("twice.nccl.xml",
                       "<system version=\"1\"><cpu numaid=\"0\" affinity=\"3\">"
                       "<pci busid=\"0000:04:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"0\"/></pci>"
                       "<pci busid=\"04:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"1\"/></pci>"
                       "</cpu></system>\n");
  CHECK_THROWS_WITH(load_topology_file(twice.path()), Catch::Contains("0000:04:00.0 is listed twice"));
  const TempFile bad_class("badclass.nccl.xml",
                           "<system version=\"1\"><cpu numaid=\"0\" affinity=\"3\">"
                           "<pci busid=\"0000:04:00.0\" class=\"0x03zz00\"/></cpu></system>\n");
  CHECK_THROWS_WITH(load_topology_file(bad_class.path()), Catch::Contains("class=\"0x03zz00\" is not a number"));
}

TEST_CASE("hwloc XML captured on a real one-H100 VM", "[topology]") {
  const Topology t = load_topology_file(fixture("captured-h100-vm-1gpu.xml"));
  REQUIRE(t.gpus.size() == 1);
  CHECK(t.gpus[0].address.to_string() == "0000:00:06.0");
  CHECK(t.gpus[0].device_id == 0x2330);  // H100 SXM, class 0x0302 "3D controller"
  CHECK(t.gpus[0].numa_node == 0);
  CHECK(t.gpus[0].local_cpus.to_list() == "0-15");  // as nvidia-smi topo -m reported on that VM
  CHECK(t.gpus[0].switch_path.empty());
  REQUIRE(t.nics.size() == 1);
  CHECK(t.nics[0].interface_name == "eth0");
  CHECK(t.all_cpus.to_list() == "0-15");
}

namespace {

std::string fixture_text(const std::string& name) {
  std::ifstream in(fixture(name));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("hwloc is given what libxml2 read: quoting, comments and element order do not change the topology", "[topology]") {
  // Found by fuzzing (tests/fuzz/regressions/hwloc_xml/leak-97a09149...): a file libxml2 reads but
  // hwloc's own parser does not made hwloc 2.9 leak the object it was reading. hwloc now reads our
  // writing of libxml2's parse, so both see one document.
  const std::string good = fixture_text("xeon-snc4-ib.xml");
  const Topology expected = load_hwloc_xml(fixture("xeon-snc4-ib.xml"));
  REQUIRE(expected.gpus.size() > 0);
  REQUIRE(!expected.numa_distances.empty());
  const std::size_t body = good.find("<topology");
  REQUIRE(body != std::string::npos);
  std::string odd = good.substr(body);  // no XML declaration or DOCTYPE: hwloc's parser needs them, libxml2 not
  replace_all(odd, "=\"", "='");
  replace_all(odd, "\" ", "' ");
  replace_all(odd, "\">", "'>");
  replace_all(odd, "\"/>", "'/>");
  replace_all(odd, "<object ", "<!-- a comment with <object> in it --><object\n  ");
  replace_all(odd, "<indexes length='16'>", "<indexes length='99'> 00");  // hwloc reads 00 as octal and checks lengths
  REQUIRE(odd != good);
  const TempFile file("odd-but-valid.xml", odd);
  const Topology t = load_hwloc_xml(file.path());
  CHECK(addresses(t.gpus) == addresses(expected.gpus));
  CHECK(addresses(t.nics) == addresses(expected.nics));
  CHECK(t.numa_distances == expected.numa_distances);
  CHECK(t.all_cpus == expected.all_cpus);
  for (std::size_t i = 0; i < t.nics.size(); ++i) {
    CHECK(t.nics[i].interface_name == expected.nics[i].interface_name);
    CHECK(t.nics[i].rdma_device == expected.nics[i].rdma_device);
    CHECK(t.nics[i].local_cpus == expected.nics[i].local_cpus);
  }
}

TEST_CASE("hwloc XML that hwloc would misread is refused with the line", "[topology]") {
  const std::string good = fixture_text("xeon-snc4-ib.xml");
  const std::string matrix = "<u64values length=\"192\">10 12";
  REQUIRE(good.find(matrix) != std::string::npos);
  for (const auto& [from, to, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {matrix, "<u64values length=\"192\">10 x12", "not decimal numbers"},
           {matrix, "<u64values length=\"192\">12", "has 8 indexes and 63 values, expected 8 and 64"},
           {"nbobjs=\"8\"", "nbobjs=\"100000\"", "needs nbobjs from 1 to 1024"},
           {"<topology version=\"2.0\">", "<topology version=\"3.0\">", "is not one hwloc 2 reads"},
           {"</topology>", "<object type=\"Machine\"/></topology>", "a second top-level <object>"}}) {
    std::string bad = good;
    REQUIRE(bad.find(from) != std::string::npos);
    bad.replace(bad.find(from), from.size(), to);
    const TempFile file("misread.xml", bad);
    CHECK_THROWS_WITH(load_hwloc_xml(file.path()), Catch::Contains(file.path()) && Catch::Contains(why));
  }
}
