// Our collective algorithms on host memory over any Transport, one .cpp each; all blocking.
// Collectives (collectives.hpp) picks one per call; counts and in-place rules are communicator.hpp's.
#pragma once

#include "comm/algorithms/call.hpp"
#include "comm/communicator.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpudirect::comm {

// Ring (ring_*.cpp): n-1 steps, each rank sending to the next and receiving from the previous.
// Bandwidth-optimal: an all_reduce moves 2(n-1)/n of the buffer per rank.
void ring_all_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
void ring_all_gather(const Call& call, const void* send, void* recv, std::size_t count, DataType type);
void ring_reduce_scatter(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
// The ring's halves on blocks b = elements [offsets[b], offsets[b+1]) of `data`, for algorithms
// built from them; `step` numbers the tags and carries on from one half to the next.
// Reduce-scatter reads `input` (never written) and leaves block b reduced in `data` on rank b.
void ring_reduce_scatter_blocks(const Call& call, const char* input, char* data, DataType type, ReduceOp op,
                                const std::vector<std::size_t>& offsets, std::uint32_t& step);
void ring_all_gather_blocks(const Call& call, char* data, std::size_t element, const std::vector<std::size_t>& offsets,
                            std::uint32_t& step);

// Recursive doubling (recursive_doubling.cpp): log2(n) exchanges of the whole buffer, for buffers
// small enough that the number of steps costs more than the bytes.
void recursive_doubling_all_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);

// Direct reads (direct_reads.cpp), where the transport reads peers' memory: each rank reduces or
// copies straight from the peers' buffers, with no ring steps and no scratch round trips.
void direct_all_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
void direct_all_gather(const Call& call, const void* send, void* recv, std::size_t count, DataType type);
void direct_reduce_scatter(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);

// Binomial trees (tree_*.cpp): log2(n) rounds from the root or to it.
void tree_broadcast(const Call& call, const void* send, void* recv, std::size_t count, DataType type, int root);
void tree_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root);

// Pairwise exchange (pairwise_alltoall.cpp): n-1 steps, step s with the ranks s ahead and s behind.
void pairwise_alltoall(const Call& call, const void* send, void* recv, std::size_t count, DataType type);

// One exchange with the ring neighbours (neighbour_sendrecv.cpp).
void neighbour_sendrecv(const Call& call, const void* send, void* recv, std::size_t count, DataType type);

// Dissemination (dissemination_barrier.cpp): log2(n) rounds of one-byte messages.
void dissemination_barrier(const Call& call);

}  // namespace gpudirect::comm
