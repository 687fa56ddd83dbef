// The one segment of zeroed memory every rank of a one-host job maps, for the staging rings
// (staged_collectives.hpp): a POSIX shared memory object that rank 0 creates and unlinks as soon
// as every rank has mapped it, so nothing is left in /dev/shm however the ranks exit.
#pragma once

#include "bootstrap/store.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpudirect::comm {

class StagingSegment {
 public:
  StagingSegment(void* memory, std::size_t bytes) : memory_(memory), bytes_(bytes) {}
  ~StagingSegment();
  StagingSegment(const StagingSegment&) = delete;
  StagingSegment& operator=(const StagingSegment&) = delete;

  void* data() const { return memory_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* memory_;
  std::size_t bytes_;
};

// Every rank calls it (a collective over `store`). Returns the mapping, or null on every rank
// together when any rank could not map it, with the first rank's reason in `why_not`. `used`:
// the (offset, bytes) ranges this rank will touch, whose pages it faults in for writing before
// any rank uses the memory (on VMs the first touch of a page costs a hypervisor trap); empty:
// every page.
std::unique_ptr<StagingSegment> map_staging_segment(bootstrap::Store& store, int rank, std::size_t bytes, std::string* why_not,
                                                    const std::vector<std::pair<std::size_t, std::size_t>>& used = {});

}  // namespace gpudirect::comm
