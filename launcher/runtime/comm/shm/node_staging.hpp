// Whether a job's host collectives go through shared-memory staging (StagedCollectives): when all
// its ranks are on one host, unless GPUDIRECT_COMM_STAGING=0; and whether its all_gathers read
// peers' buffers in place (every rank can map every other's memfd; GPUDIRECT_COMM_DIRECT_READS=0
// turns it off). Decided by all ranks together.
#pragma once

#include "bootstrap/launch_context.hpp"
#include "bootstrap/store.hpp"
#include "comm/shm/peer_readable_buffers.hpp"
#include "comm/shm/staged_collectives.hpp"
#include "comm/shm/staging_segment.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace gpudirect::comm {

struct NodeStaging {
  std::unique_ptr<ShareableMemory> shareable;  // null: Communicator::allocate hands out private memory
  std::unique_ptr<StagingSegment> memory;
  std::unique_ptr<StagedCollectives> collectives;  // null: messages only
};

// This process's CPUs (its affinity mask) as "0,1,4", and the number of distinct CPUs in such
// lists: ranks spin while they wait only where the host's ranks have at least one CPU each.
std::string cpus_of_this_process();
std::size_t distinct_cpus(const std::vector<std::string>& cpu_lists);

// Every rank calls it (a collective over `store`). Where shared memory cannot be had (a full
// /dev/shm, too many ranks), rank 0 says why on stderr and every rank goes on with messages.
NodeStaging stage_on_one_host(const bootstrap::LaunchContext& context, bootstrap::Store& store, std::chrono::milliseconds timeout);

}  // namespace gpudirect::comm
