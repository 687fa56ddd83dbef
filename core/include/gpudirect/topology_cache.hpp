// The node's topology kept between job steps: what hwloc loaded (live discovery, 10-30 ms on a GPU
// node, or a checked topology= file) saved as hwloc's own XML in a root-owned directory, so the
// next steps only read it back. One file per source, named after it; its first lines are the key
// it was written under, and it is used only when that key is this node's key now:
//   boot id (a reboot invalidates), hwloc's version, the source (live, or the file's path, size and
//   a hash of its bytes), and for live discovery the names under /sys/bus/pci/devices,
//   /sys/class/net and /sys/class/infiniband and the online CPUs (a hardware or driver change).
// A file is trusted only if it is a regular file (no symlink followed) owned by root or this
// process's user and writable by no one else, in a directory that passes the same checks; it is
// written to a temporary file and renamed into place. A refused, stale or corrupt file (size or
// checksum wrong, or hwloc rejects it) means a full load, which writes the file again.
// NCCL topology files are not kept (hwloc cannot export them): they are read every time.
#pragma once

#include "gpudirect/topology.hpp"

#include <string>

namespace gpudirect {

struct TopologyCacheConfig {
  std::string dir;                  // "" = no cache
  std::string sysfs_root = "/sys";  // for the live key (tests use a copy)
  std::string boot_id_path = "/proc/sys/kernel/random/boot_id";
};

struct CachedTopology {
  Topology topology;
  bool from_cache = false;
  std::string note;  // why the cache was not used or not written, for verbose output; "" when all went well
};

// The topology of `topology_file` ("" = live discovery), from the cache when it holds this key.
// Throws TopologyError only when the topology itself cannot be loaded.
CachedTopology load_topology_cached(const std::string& topology_file, const TopologyCacheConfig& config);

// For tests and messages: the key the source has now, and the file that holds it.
std::string topology_cache_key(const std::string& topology_file, const TopologyCacheConfig& config);
std::string topology_cache_path(const std::string& topology_file, const TopologyCacheConfig& config);

}  // namespace gpudirect
