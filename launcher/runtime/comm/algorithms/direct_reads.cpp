// Direct reads, where the transport reads peers' memory (libfabric shm: CMA): every rank tells its
// peers where its buffers are, reduces its own block straight from their inputs in cache-sized
// chunks (one copy into cache, one write of the result), then copies the other blocks from their
// owners. Two small barriers keep buffers unchanged while peers read them. Against the ring: no
// steps and no scratch round trips, but a round trip per read, so only from tuning's sizes up.
#include "comm/algorithms/algorithms.hpp"

#include "comm/block_offsets.hpp"
#include "comm/reduce_kernels.hpp"

#include <algorithm>
#include <cstring>

namespace gpudirect::comm {
namespace {

// Every rank's regions, `mine` among them. Also the start signal: a rank sends its regions once
// its input is in place.
std::vector<RemoteRegion> share_regions(const Call& call, const std::vector<RemoteRegion>& mine, std::uint32_t& step) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t k = mine.size(), bytes = k * sizeof(RemoteRegion);
  std::vector<RemoteRegion> all(static_cast<std::size_t>(n) * k);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * k));
  for (int s = 1; s < n; ++s) {
    const int from = mod(r - s, n);
    t.exchange(mod(r + s, n), mine.data(), bytes, from, all.data() + static_cast<std::size_t>(from) * k, bytes, call.tag(step++));
  }
  return all;
}

void direct_barrier(const Call& call, std::uint32_t& step) {
  Transport& t = call.t;
  char token = 0, incoming = 0;
  const int n = t.size(), r = t.rank();
  for (int distance = 1; distance < n; distance *= 2)  // dissemination
    t.exchange(mod(r + distance, n), &token, 1, mod(r - distance, n), &incoming, 1, call.tag(step++));
}

// out = own op (every peer's region at `offset`), `count` elements, one chunk at a time: a chunk
// of a peer's input is read into scratch (in cache) and folded into the chunk of out at once.
void reduce_block_from_peers(const Call& call, const char* own, char* out, const std::vector<RemoteRegion>& inputs, std::size_t offset,
                             std::size_t count, DataType type, ReduceOp op) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t element = size_of(type);
  const std::size_t chunk = std::max<std::size_t>(1, call.tuning.chunk_bytes / element);
  char* incoming = call.scratch(std::min(chunk, count) * element, 1);
  for (std::size_t first = 0; first < count; first += chunk) {
    const std::size_t elements = std::min(chunk, count - first), at = first * element;
    for (int s = 1; s < n; ++s) {
      const int peer = mod(r + s, n);
      t.read(peer, inputs[static_cast<std::size_t>(peer)], offset + at, incoming, elements * element);
      reduce_pair(out + at, s == 1 ? own + at : out + at, incoming, elements, type, op);
    }
  }
}

}  // namespace

void direct_all_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t element = size_of(type), bytes = count * element;
  char* data = static_cast<char*>(recv);
  const auto offsets = block_offsets(count, n);
  std::uint32_t step = 0;
  const auto regions = share_regions(call, {t.expose(send, bytes), t.expose(recv, bytes)}, step);
  std::vector<RemoteRegion> inputs(static_cast<std::size_t>(n)), results(static_cast<std::size_t>(n));
  for (std::size_t q = 0; q < static_cast<std::size_t>(n); ++q) inputs[q] = regions[2 * q], results[q] = regions[2 * q + 1];
  // Reduce-scatter: this rank's block from everyone's input. In place, peers read only the other
  // blocks of this buffer, so writing our block while they read is safe.
  const auto mine = static_cast<std::size_t>(r);
  const std::size_t first = offsets[mine], elements = offsets[mine + 1] - first;
  reduce_block_from_peers(call, static_cast<const char*>(send) + first * element, data + first * element, inputs, first * element, elements,
                          type, op);
  if (op == ReduceOp::avg) divide_for_average(data + first * element, elements, type, n);
  direct_barrier(call, step);  // every block is final
  // All-gather: the other blocks from their owners' results.
  for (int s = 1; s < n; ++s) {
    const auto q = static_cast<std::size_t>(mod(r + s, n));
    const std::size_t at = offsets[q] * element;
    t.read(static_cast<int>(q), results[q], at, data + at, (offsets[q + 1] - offsets[q]) * element);
  }
  direct_barrier(call, step);  // nobody reads our buffers any more: the caller may change them
}

void direct_all_gather(const Call& call, const void* send, void* recv, std::size_t count, DataType type) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t block = count * size_of(type);
  char* data = static_cast<char*>(recv);
  std::uint32_t step = 0;
  // Peers read our send buffer (in place it is our block of recv), so they need not wait for the copy.
  const auto regions = share_regions(call, {t.expose(send, block)}, step);
  char* own = data + static_cast<std::size_t>(r) * block;
  if (send != own) std::memcpy(own, send, block);
  for (int s = 1; s < n; ++s) {
    const auto q = static_cast<std::size_t>(mod(r + s, n));
    t.read(static_cast<int>(q), regions[q], 0, data + q * block, block);
  }
  direct_barrier(call, step);
}

void direct_reduce_scatter(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t block = count * size_of(type);
  std::uint32_t step = 0;
  const auto regions = share_regions(call, {t.expose(send, block * static_cast<std::size_t>(n))}, step);
  // In place our block of send is recv: peers read the other blocks only.
  const std::size_t at = static_cast<std::size_t>(r) * block;
  reduce_block_from_peers(call, static_cast<const char*>(send) + at, static_cast<char*>(recv), regions, at, count, type, op);
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
  direct_barrier(call, step);
}

}  // namespace gpudirect::comm
