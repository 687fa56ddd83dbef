// Whatever hwloc itself writes loads (issue 22): for every hwloc file among the fixtures, ours and
// the real machines' under fixtures/real/hwloc/, hwloc's own export of it, in today's format and
// in hwloc 1.x's, loads and gives the same topology as the original.
#include <catch2/catch.hpp>

#include "gpudirect/topology_sources.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

using namespace gpudirect;

namespace {

const std::filesystem::path kFixtures = GPUDIRECT_FIXTURE_DIR;

// Every hwloc XML fixture that is meant to load (the malformed-* ones are meant not to).
std::vector<std::filesystem::path> hwloc_fixtures() {
  std::vector<std::filesystem::path> files;
  for (const auto& dir : {kFixtures, kFixtures / "real" / "hwloc"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.path().extension() == ".xml" && !name.ends_with(".nccl.xml") && !name.starts_with("malformed-"))
        files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// hwloc's export of `path` as hwloc itself loads it: no gpudirect code between the file and hwloc.
std::string export_by_hwloc(const std::filesystem::path& path, unsigned long flags) {
  hwloc_topology_t topology = nullptr;
  REQUIRE(hwloc_topology_init(&topology) == 0);
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL);
  // The whole machine, as the file describes it: lstopo run in a job's cgroup marks the CPUs it
  // could not use as disallowed, and they are still the machine's.
  hwloc_topology_set_flags(topology, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  std::string xml;
  if (hwloc_topology_set_xml(topology, path.c_str()) == 0 && hwloc_topology_load(topology) == 0) {
    char* buffer = nullptr;
    int length = 0;
    if (hwloc_topology_export_xmlbuffer(topology, &buffer, &length, flags) == 0 && buffer) {
      xml.assign(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0);
      hwloc_free_xmlbuffer(topology, buffer);
    }
  }
  hwloc_topology_destroy(topology);
  return xml;
}

std::string describe(const std::vector<PciAddress>& path) {
  std::string out;
  for (const PciAddress& bridge : path) out += bridge.to_string() + ">";
  return out;
}

// Everything the binding reads, one line per device.
std::vector<std::string> facts(const Topology& t, bool with_distances) {
  std::vector<std::string> out{"cpus " + t.all_cpus.to_list()};
  for (const Gpu& g : t.gpus)
    out.push_back("gpu " + g.address.to_string() + " " + std::to_string(g.device_id) + " numa " + std::to_string(g.numa_node) + " pkg " +
                  std::to_string(g.package) + " cpus " + g.local_cpus.to_list() + " path " + describe(g.switch_path));
  for (const Nic& n : t.nics)
    out.push_back("nic " + nic_bus_id(n) + " " + nic_label(n) + " " + std::string(to_string(n.kind)) + " numa " +
                  std::to_string(n.numa_node) + " pkg " + std::to_string(n.package) + " cpus " + n.local_cpus.to_list() + " path " +
                  describe(n.switch_path));
  if (with_distances)
    for (const auto& [pair, distance] : t.numa_distances)
      out.push_back("distance " + std::to_string(pair.first) + "-" + std::to_string(pair.second) + " " + std::to_string(distance));
  return out;
}

}  // namespace

TEST_CASE("hwloc's own export of every hwloc fixture loads and gives the same topology", "[topology][real]") {
  const auto files = hwloc_fixtures();
  REQUIRE(files.size() >= 10);
  for (const auto& file : files) {
    INFO(file.string());
    const Topology original = load_hwloc_xml(file.string());
    // hwloc 1.x's format keeps no NUMA distance matrix we read (its <distances> hang inside objects).
    for (const auto& [flags, format, with_distances] :
         {std::tuple{0ul, "current", true}, std::tuple{static_cast<unsigned long>(HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1), "1.x", false}}) {
      INFO("hwloc export format " << format);
      const std::string xml = export_by_hwloc(file, flags);
      REQUIRE(!xml.empty());
      const std::filesystem::path copy =
          std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-roundtrip-" + file.filename().string());
      std::ofstream(copy) << xml;
      Topology exported;
      try {
        exported = load_hwloc_xml(copy.string());
      } catch (const TopologyError& e) {
        std::filesystem::remove(copy);
        FAIL("hwloc's own export does not load: " << e.what());
      }
      std::filesystem::remove(copy);
      CHECK(facts(exported, with_distances) == facts(original, with_distances));
    }
  }
}
