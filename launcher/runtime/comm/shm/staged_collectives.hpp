// all_reduce, all_gather and reduce_scatter for ranks that share one host, through rings of
// cache-sized slots in memory every rank maps (a StagingSegment), or from the peers' buffers where
// they lie (peer_readable_buffers.hpp). Why not messages: libfabric's shm provider copies a block
// through a bounce buffer into scratch before it can be reduced (with CMA once, but CMA copies are
// slow on some VMs); here the owner of a block reduces it straight from the slots, fused with the
// transfer, so each byte goes through memory about half as often. How the rings work:
// staged_collectives.cpp.
#pragma once

#include "bootstrap/abort_signal.hpp"
#include "comm/communicator.hpp"
#include "comm/shm/peer_readable_buffers.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpudirect::comm {

struct StagingLayout {
  int ranks = 0;
  std::size_t chunk_bytes = 128 * 1024;  // measured best for bench all_reduce and all_gather (docs/performance.md)
  std::size_t slots = 8;

  // The layout for `ranks` ranks within `budget` bytes: fewer and smaller slots as rings multiply.
  // Throws std::invalid_argument where even two slots of 16 KiB per ring do not fit, or for a chunk
  // that is not a multiple of 64 bytes.
  static StagingLayout for_ranks(int ranks, std::size_t budget = kDefaultBudget, std::size_t chunk_bytes = 128 * 1024);
  std::size_t ring_count() const { return static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks); }
  std::size_t broadcast_ring(int owner) const { return static_cast<std::size_t>(owner); }
  std::size_t peer_ring(int writer, int reader) const;  // writer's chunks of reader's block
  // The rings `rank` writes or reads (3 x ranks - 2 of them), as byte ranges of the segment: the
  // only memory it touches.
  std::vector<std::pair<std::size_t, std::size_t>> ranges_used_by(int rank) const;
  std::size_t header_bytes() const;  // counts, one cache line each (no false sharing between writers)
  std::size_t ring_bytes() const { return header_bytes() + slots * chunk_bytes; }
  std::size_t bytes() const { return ring_count() * ring_bytes(); }

  static constexpr std::size_t kDefaultBudget = std::size_t(64) << 20;
};

// How a rank waits: gives up after `timeout` without progress (naming the rank it waits for), and
// at once when the job aborts. `on_failure` (may be empty) tells the other ranks before throwing.
struct StagingWait {
  std::chrono::milliseconds timeout{30000};
  // Keep polling this long after the last progress before yielding the core: a peer on another
  // core answers within a microsecond or two, and a yield costs as much. Only where every rank has a
  // CPU of its own; oversubscribed, a spinning rank holds the core its peer needs.
  std::chrono::nanoseconds spin{0};
  std::shared_ptr<bootstrap::AbortSignal> abort;
  std::function<void(const std::string&)> on_failure;
  std::string host;  // for messages
};

// Reading peers' blocks where they lie (every rank of the job turns it on, or none).
struct DirectReads {
  const ShareableMemory* own = nullptr;  // this rank's shareable allocations; not owned
  std::vector<pid_t> pids;               // of every rank
  // From this block size on (all_reduce: its size / ranks), every call starts with where the
  // buffers lie (or that they do not); smaller ones travel through the slots.
  std::size_t min_block_bytes = 0;
};

class StagedCollectives {
 public:
  // `memory`: layout.bytes() of memory that every rank maps and that was zero before any rank used
  // it. Not owned.
  StagedCollectives(void* memory, StagingLayout layout, int rank, StagingWait wait, std::optional<DirectReads> direct = std::nullopt);

  int rank() const { return rank_; }
  int size() const { return layout_.ranks; }

  // Same counts and in-place rules as Communicator's.
  void all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void all_gather(const void* send, void* recv, std::size_t count, DataType type);
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);

 private:
  std::size_t broadcast_ring(int owner) const { return layout_.broadcast_ring(owner); }
  std::size_t peer_ring(int writer, int reader) const { return layout_.peer_ring(writer, reader); }
  std::uint64_t* written(std::size_t ring) const;
  std::uint64_t* read_by(std::size_t ring, int reader) const;
  char* slot(std::size_t ring, std::uint64_t chunk) const;
  // A reader of `ring` (`reader`, or -1: any other rank) with `by` or more of this rank's chunks
  // still unread, else -1. By `slots`: it is still on the slot this rank would write next; by 1: it
  // has not read everything this rank wrote.
  int reader_behind(std::size_t ring, std::uint64_t by, int reader = -1) const;
  bool has_chunk(std::size_t ring) const;
  void publish(std::size_t ring);
  void consume(std::size_t ring);

  // all_reduce (with `results`: where every block's result goes) and reduce_scatter: this rank
  // reduces its block into `own_out`. Reads the peers' buffers where they lie when every rank's are
  // shareable, else goes through the rings.
  void reduce(const char* send, char* own_out, const std::vector<std::size_t>& offsets, DataType type, ReduceOp op, char* results);
  // Through the rings: reduces this rank's block from every rank's chunks of it; with `results`,
  // also publishes each reduced chunk and copies the other blocks' results into `results`.
  // `announced`: every peer's broadcast ring starts with an announcement to pass over.
  void reduce_blocks(const char* send, char* own_out, const std::vector<std::size_t>& offsets, DataType type, ReduceOp op, char* results,
                     bool announced);
  // In place: reduces this rank's block from the peers' `inputs` (mapped), copies the other blocks'
  // results from their owners' `outputs`.
  void reduce_blocks_directly(const char* send, char* own_out, const std::vector<std::size_t>& offsets, DataType type, ReduceOp op,
                              char* results, const std::vector<const char*>& inputs, const std::vector<const char*>& outputs);

  class Progress;
  // `bytes` of `peer`'s memory at `where`; where it cannot be mapped, tells every rank and throws.
  const char* map_peer(int peer, const SharedLocation& where, std::size_t bytes, const std::string& what);
  // Copies `peer`'s block from where the slot it published says it lies; false where it does not
  // lie in shareable memory (its chunks follow in the ring).
  bool read_block_directly(int peer, const char* slot, char* target, std::size_t bytes);

  char* memory_;
  StagingLayout layout_;
  int rank_;
  StagingWait wait_;
  std::vector<std::uint64_t> written_by_me_;  // per ring: chunks this rank wrote (its own rings)
  std::vector<std::uint64_t> read_by_me_;     // per ring: chunks this rank read (its peers' rings)
  std::optional<DirectReads> direct_;
  std::unique_ptr<PeerBuffers> peer_buffers_;
};

}  // namespace gpudirect::comm
