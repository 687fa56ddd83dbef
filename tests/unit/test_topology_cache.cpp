// The topology cache (topology_cache.hpp): a hit gives what the source gives, a changed source,
// boot or hardware is a miss, and a file that is tampered with, foreign, linked or corrupt is
// never used: the topology is loaded again from its source and the file written anew.
#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/topology_cache.hpp"
#include "gpudirect/topology_sources.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

using namespace gpudirect;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return gpudirect::testing::fixture_path(name); }

// Everything binding reads from a topology, as text, to compare two loads.
std::string summary(const Topology& t) {
  std::ostringstream out;
  out << t.source << " host=" << t.host << " cpus=" << t.all_cpus.to_list() << "\n";
  const auto path = [&](const std::vector<PciAddress>& p) {
    std::string s;
    for (const PciAddress& a : p) s += a.to_string() + ">";
    return s;
  };
  for (const Gpu& g : t.gpus)
    out << "gpu " << g.address.to_string() << " " << g.device_id << " numa " << g.numa_node << " pkg " << g.package << " cpus "
        << g.local_cpus.to_list() << " path " << path(g.switch_path) << "\n";
  for (const Nic& n : t.nics)
    out << "nic " << nic_bus_id(n) << " " << n.interface_name << "/" << n.rdma_device << " class " << n.pci_class << " " << n.vendor << ":"
        << n.device_id << " speed " << n.link_speed_gbs << " kind " << to_string(n.kind) << " numa " << n.numa_node << " pkg " << n.package
        << " cpus " << n.local_cpus.to_list() << " path " << path(n.switch_path) << "\n";
  for (const auto& [pair, distance] : t.numa_distances) out << "numa " << pair.first << "-" << pair.second << "=" << distance << "\n";
  for (const std::string& note : t.notes) out << "note " << note << "\n";
  return out.str();
}

struct Scratch {
  fs::path root;
  TopologyCacheConfig config;
  explicit Scratch(const std::string& name) {
    root = fs::temp_directory_path() / ("gpudirect-cache-test-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    fs::permissions(root,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
    config.dir = (root / "cache").string();
    config.boot_id_path = (root / "boot_id").string();
    write(config.boot_id_path, "11111111-2222-3333-4444-555555555555\n");
  }
  ~Scratch() { fs::remove_all(root); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  static void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

// A file and its cache entry, the entry written by a first load.
struct Primed : Scratch {
  std::string source;
  std::string cache_file;
  std::string expected;
  explicit Primed(const std::string& name) : Scratch(name) {
    source = (root / "topology.xml").string();
    fs::copy_file(fixture("a3-megagpu-8g.xml"), source);
    expected = summary(load_topology_file(source));
    const CachedTopology first = load_topology_cached(source, config);
    REQUIRE_FALSE(first.from_cache);
    REQUIRE(first.note.empty());
    cache_file = topology_cache_path(source, config);
    REQUIRE(fs::exists(cache_file));
  }
  // The next load must not use the cache, must say why (when `why` is given), and must still give
  // the file's topology and write a good entry again.
  void expect_refused(const std::string& why) {
    const CachedTopology again = load_topology_cached(source, config);
    CHECK_FALSE(again.from_cache);
    if (!why.empty()) CHECK_THAT(again.note, Catch::Contains(why));
    CHECK(summary(again.topology) == expected);
    const CachedTopology healed = load_topology_cached(source, config);
    CHECK(healed.from_cache);
    CHECK(summary(healed.topology) == expected);
  }
};

}  // namespace

TEST_CASE("topology cache: a hit gives exactly what the hwloc file gives", "[topology_cache]") {
  Scratch scratch("hit");
  for (const char* name : {"a3-megagpu-8g.xml", "a3-highgpu-8g.xml", "p5-like.xml", "nd-h100-v5-like.xml", "epyc-mi250x-nps4.xml",
                           "epyc-mi300x-8.xml", "power9-ib.xml", "workstation-rtx.xml", "local-a3mega-2cpu.xml", "gpu-less.xml"}) {
    INFO(name);
    const std::string expected = summary(load_topology_file(fixture(name)));
    const CachedTopology first = load_topology_cached(fixture(name), scratch.config);
    CHECK_FALSE(first.from_cache);
    CHECK(first.note.empty());
    CHECK(summary(first.topology) == expected);
    const CachedTopology second = load_topology_cached(fixture(name), scratch.config);
    CHECK(second.from_cache);
    CHECK(summary(second.topology) == expected);
  }
  struct stat info {};
  REQUIRE(::stat(topology_cache_path(fixture("p5-like.xml"), scratch.config).c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0644);
  CHECK(info.st_uid == ::geteuid());
}

TEST_CASE("topology cache: off, or an NCCL file, reads the source every time", "[topology_cache]") {
  Scratch scratch("nccl");
  const CachedTopology nccl = load_topology_cached(fixture("a3-megagpu-8g.nccl.xml"), scratch.config);
  CHECK_FALSE(nccl.from_cache);
  CHECK(nccl.topology.gpus.size() == 8);
  CHECK_FALSE(fs::exists(topology_cache_path(fixture("a3-megagpu-8g.nccl.xml"), scratch.config)));
  TopologyCacheConfig off = scratch.config;
  off.dir.clear();
  CHECK_FALSE(load_topology_cached(fixture("p5-like.xml"), off).from_cache);
  CHECK_FALSE(load_topology_cached(fixture("p5-like.xml"), off).from_cache);
}

TEST_CASE("topology cache: a changed file or another boot is a miss", "[topology_cache]") {
  Primed primed("stale");
  SECTION("the file is replaced by another topology") {
    fs::remove(primed.source);
    fs::copy_file(fixture("p5-like.xml"), primed.source);
    const CachedTopology after = load_topology_cached(primed.source, primed.config);
    CHECK_FALSE(after.from_cache);
    CHECK(summary(after.topology) == summary(load_topology_file(primed.source)));
    CHECK(summary(after.topology) != primed.expected);
    CHECK(load_topology_cached(primed.source, primed.config).from_cache);
  }
  SECTION("the node rebooted") {
    Scratch::write(primed.config.boot_id_path, "99999999-2222-3333-4444-555555555555\n");
    const CachedTopology after = load_topology_cached(primed.source, primed.config);
    CHECK_FALSE(after.from_cache);
    CHECK(after.note.empty());  // stale is not an error
    CHECK(load_topology_cached(primed.source, primed.config).from_cache);
  }
}

TEST_CASE("topology cache: the live key follows PCI devices, NICs and online CPUs", "[topology_cache]") {
  Scratch scratch("live");
  const fs::path sys = scratch.root / "sys";
  fs::create_directories(sys / "bus/pci/devices/0000:04:00.0");
  fs::create_directories(sys / "class/net/enp6s0");
  fs::create_directories(sys / "devices/system/cpu");
  Scratch::write((sys / "devices/system/cpu/online").string(), "0-7\n");
  scratch.config.sysfs_root = sys.string();
  const std::string key = topology_cache_key("", scratch.config);
  CHECK_THAT(key, Catch::Contains("pci 0000:04:00.0\n"));
  CHECK_THAT(key, Catch::Contains("net enp6s0\n"));
  CHECK_THAT(key, Catch::Contains("infiniband -\n"));
  CHECK_THAT(key, Catch::Contains("cpus 0-7\n"));
  CHECK_THAT(key, Catch::Contains("boot 11111111-2222-3333-4444-555555555555\n"));
  CHECK(topology_cache_key("", scratch.config) == key);
  fs::create_directories(sys / "bus/pci/devices/0000:05:00.0");
  const std::string with_device = topology_cache_key("", scratch.config);
  CHECK(with_device != key);
  fs::rename(sys / "class/net/enp6s0", sys / "class/net/eth9");
  CHECK(topology_cache_key("", scratch.config) != with_device);
  Scratch::write((sys / "devices/system/cpu/online").string(), "0-3\n");
  CHECK(topology_cache_key("", scratch.config) != with_device);
  CHECK(topology_cache_path("", scratch.config) == scratch.config.dir + "/topology-live.cache");
}

TEST_CASE("topology cache: a tampered, linked or foreign file is never used", "[topology_cache]") {
  Primed primed("tamper");
  SECTION("writable by others") {
    fs::permissions(primed.cache_file, fs::perms::others_write, fs::perm_options::add);
    primed.expect_refused("writable by group or others");
  }
  SECTION("a symbolic link to a good entry") {
    const std::string elsewhere = (primed.root / "elsewhere.cache").string();
    fs::rename(primed.cache_file, elsewhere);
    fs::create_symlink(elsewhere, primed.cache_file);
    primed.expect_refused("symbolic link");
    CHECK_FALSE(fs::is_symlink(primed.cache_file));
  }
  SECTION("owned by another user") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give the cache file to another user; this section checks nothing");
      return;
    }
    REQUIRE(::chown(primed.cache_file.c_str(), 12345, 12345) == 0);
    primed.expect_refused("owned by uid 12345");
  }
  SECTION("the directory is writable by others: no cache at all") {
    fs::permissions(primed.config.dir, fs::perms::others_write, fs::perm_options::add);
    const CachedTopology again = load_topology_cached(primed.source, primed.config);
    CHECK_FALSE(again.from_cache);
    CHECK_THAT(again.note, Catch::Contains("writable by group or others"));
    CHECK(summary(again.topology) == primed.expected);
  }
}

TEST_CASE("topology cache: a corrupt file falls back to the source", "[topology_cache]") {
  Primed primed("corrupt");
  const std::string good = Scratch::read(primed.cache_file);
  SECTION("truncated") {
    Scratch::write(primed.cache_file, good.substr(0, good.size() / 2));
    primed.expect_refused("corrupt");
  }
  SECTION("one byte of the XML changed") {
    std::string bad = good;
    bad[bad.size() - 20] ^= 0x20;
    Scratch::write(primed.cache_file, bad);
    primed.expect_refused("corrupt");
  }
  SECTION("intact checksum over XML that hwloc rejects") {
    const std::string key = topology_cache_key(primed.source, primed.config);
    const std::string body = "<topology><object type=\"Machine\"";
    char hash[32];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(body));
    Scratch::write(primed.cache_file, key + "body " + std::to_string(body.size()) + " " + hash + "\n" + body);
    primed.expect_refused("rejected");
  }
  SECTION("empty") {
    Scratch::write(primed.cache_file, "");
    primed.expect_refused("");
  }
}
