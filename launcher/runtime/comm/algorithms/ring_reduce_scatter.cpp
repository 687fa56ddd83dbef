// Ring reduce-scatter: step s sends the block s+1 behind this rank, receives the one s+2 behind and
// reduces it with the input into place, so after n-1 steps each rank holds its own block reduced.
// Steps move chunks of tuning.chunk_bytes, so a received chunk is reduced while it is in cache.
// Over a network (Transport::overlaps_transfers) a step sends all its pieces at once and reduces
// each as it lands, instead of waiting one round trip per piece.
#include "comm/algorithms/algorithms.hpp"

#include "comm/reduce_kernels.hpp"

#include <algorithm>
#include <cstring>

namespace gpudirect::comm {

// No copy of the input first: step 0 sends from it and every step reduces it with what arrives.
// Every rank walks the same pieces (as many as the largest block needs) with the same tags,
// whatever its own blocks' sizes: a rank whose blocks need one piece fewer must not fall a tag
// behind its neighbours (blocks differ by one element; at a chunk boundary that was a hang).
void ring_reduce_scatter_blocks(const Call& call, const char* input, char* data, DataType type, ReduceOp op,
                                const std::vector<std::size_t>& offsets, std::uint32_t& step) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t element = size_of(type);
  const std::size_t chunk = std::max<std::size_t>(1, call.tuning.chunk_bytes / element);
  std::size_t largest = 0;
  for (int b = 0; b < n; ++b) largest = std::max(largest, offsets[static_cast<std::size_t>(b) + 1] - offsets[static_cast<std::size_t>(b)]);
  const std::size_t pieces = (largest + chunk - 1) / chunk;
  if (t.overlaps_transfers()) {
    // A step's pieces all travel at once, each reduced as it lands (while the next ones still
    // travel). One tag per step.
    const std::size_t piece = std::max(std::max<std::size_t>(1, call.tuning.piece_bytes / element),
                                       (largest + Transport::kMaxPieces - 1) / Transport::kMaxPieces);
    char* arriving = call.scratch(largest * element, 1);
    for (int s = 0; s < n - 1; ++s, ++step) {
      const auto send_block = static_cast<std::size_t>(mod(r - s - 1, n));
      const auto recv_block = static_cast<std::size_t>(mod(r - s - 2, n));
      const char* source = (s == 0 ? input : data) + offsets[send_block] * element;
      const std::size_t send_bytes = (offsets[send_block + 1] - offsets[send_block]) * element;
      const std::size_t recv_bytes = (offsets[recv_block + 1] - offsets[recv_block]) * element;
      const std::size_t base = offsets[recv_block] * element;
      t.exchange_pieces(send_bytes ? mod(r + 1, n) : -1, source, send_bytes, recv_bytes ? mod(r - 1, n) : -1, arriving, recv_bytes,
                        call.tag(step), piece * element, [&](std::size_t offset, std::size_t bytes) {
                          reduce_pair(data + base + offset, input + base + offset, arriving + offset, bytes / element, type, op);
                        });
    }
    return;
  }
  char* incoming = call.scratch(std::min(largest, chunk) * element, 1);
  // After step s rank r holds the sum of s+2 contributions of block r-s-2; the last step leaves block r.
  for (int s = 0; s < n - 1; ++s) {
    const auto send_block = static_cast<std::size_t>(mod(r - s - 1, n));
    const auto recv_block = static_cast<std::size_t>(mod(r - s - 2, n));
    const char* source = (s == 0 ? input : data) + offsets[send_block] * element;  // step 0 sends our own input
    const std::size_t send_count = offsets[send_block + 1] - offsets[send_block];
    const std::size_t recv_count = offsets[recv_block + 1] - offsets[recv_block];
    for (std::size_t p = 0; p < pieces; ++p, ++step) {
      const std::size_t first = p * chunk;
      const std::size_t sending = send_count > first ? std::min(chunk, send_count - first) : 0;
      const std::size_t receiving = recv_count > first ? std::min(chunk, recv_count - first) : 0;
      if (!sending && !receiving) continue;
      t.exchange(sending ? mod(r + 1, n) : -1, source + first * element, sending * element, receiving ? mod(r - 1, n) : -1, incoming,
                 receiving * element, call.tag(step));
      const std::size_t at = (offsets[recv_block] + first) * element;
      if (receiving) reduce_pair(data + at, input + at, incoming, receiving, type, op);
    }
  }
}

// The whole send buffer is reduced in scratch; this rank's block of it is the result.
void ring_reduce_scatter(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = call.t.size(), r = call.t.rank();
  const std::size_t element = size_of(type);
  const std::size_t total = count * static_cast<std::size_t>(n) * element;
  char* work = call.scratch(total, 0);
  if (n == 1 && total) std::memcpy(work, send, total);
  if (n > 1 && count > 0) {
    std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
    for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = static_cast<std::size_t>(b) * count;
    std::uint32_t step = 0;
    ring_reduce_scatter_blocks(call, static_cast<const char*>(send), work, type, op, offsets, step);
  }
  if (count) std::memmove(recv, work + static_cast<std::size_t>(r) * count * element, count * element);
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
}

}  // namespace gpudirect::comm
