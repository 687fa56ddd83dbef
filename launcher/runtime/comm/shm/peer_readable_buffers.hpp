// Host buffers the other ranks of the host map read-only where they lie: ShareableMemory hands out
// memfd memory (Communicator::allocate), PeerBuffers maps the peers' through /proc/PID/fd/N. Staged
// collectives then copy a peer's block once instead of through a slot, and reduce straight from
// the peers' inputs. memfd, not /dev/shm: no name to leak, nothing outlives the processes.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gpudirect::comm {

// Where a buffer lies, as a peer needs it to map it (travels through a staging slot).
struct SharedLocation {
  std::uint64_t allocation = 0;  // the owner's id of the allocation, never reused
  std::int64_t fd = -1;          // its memfd in the owner's process
  std::uint64_t allocation_bytes = 0;
  std::uint64_t offset = 0;  // of the buffer within the allocation
};

class ShareableMemory {
 public:
  ShareableMemory() = default;
  ~ShareableMemory();  // unmaps what is still allocated
  ShareableMemory(const ShareableMemory&) = delete;
  ShareableMemory& operator=(const ShareableMemory&) = delete;

  // Zeroed, every page faulted in for writing; null where the memory cannot be had this way (the
  // caller allocates privately instead; `why_not` says why).
  void* allocate(std::size_t bytes, std::string* why_not = nullptr);
  bool release(void* buffer);  // false: not one of ours
  // The allocation that holds all of [buffer, buffer + bytes), if one does.
  std::optional<SharedLocation> locate(const void* buffer, std::size_t bytes) const;

 private:
  struct Allocation {
    std::size_t bytes;
    int fd;
    std::uint64_t id;
  };
  mutable std::mutex mutex_;                       // allocate/release on the caller's thread, locate on the communicator's
  std::map<const char*, Allocation> allocations_;  // by first byte
  std::uint64_t next_id_ = 1;
};

// Peers' allocations mapped read-only into this process, kept for the calls that follow (the
// most recently used few per peer; a peer's released allocation stays mapped here until evicted).
class PeerBuffers {
 public:
  explicit PeerBuffers(std::vector<pid_t> pids) : pids_(std::move(pids)) {}
  ~PeerBuffers();
  PeerBuffers(const PeerBuffers&) = delete;
  PeerBuffers& operator=(const PeerBuffers&) = delete;

  // `bytes` of `peer`'s memory at `where`; throws std::runtime_error saying why it cannot be mapped
  // (or why `where` is not a valid place for that many bytes).
  const char* map(int peer, const SharedLocation& where, std::size_t bytes);

  static constexpr std::size_t kKeptPerPeer = 16;

 private:
  struct Mapping {
    int peer;
    std::uint64_t allocation;
    const char* base;
    std::size_t bytes;
    std::uint64_t last_used;
  };
  std::vector<pid_t> pids_;
  std::vector<Mapping> mappings_;
  std::uint64_t uses_ = 0;
};

// Before direct reads are turned on, every rank makes a probe and every other rank maps it: a
// small memfd holding `token` (a random number: a pid from another pid namespace could name some
// other process of ours). -1 where memfd is unavailable.
int make_probe_fd(std::uint64_t token);
// "" where this process maps `fd` of process `pid` and finds `token` there, else why not.
std::string try_mapping_probe(pid_t pid, int fd, std::uint64_t token);

}  // namespace gpudirect::comm
