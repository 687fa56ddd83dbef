#include "comm/algorithms/collectives.hpp"

#include "comm/algorithms/host_groups.hpp"
#include "comm/block_offsets.hpp"
#include "comm/reduce_kernels.hpp"
#include "comm/transport/group_transport.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpudirect::comm {
namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

// Tag channels (Collectives::tag): the job's own collectives, and those of its host groups.
constexpr std::uint32_t kLocalChannel = 1, kAcrossChannel = 2;

}  // namespace

struct Collectives::ByHost {
  ByHost(Transport& world, const HostGroups& groups, const CollectiveTuning& tuning)
      : ranks(groups.ranks),
        local_transport(world, groups.local),
        across_transport(world, groups.across),
        local(local_transport, tuning, nullptr, kLocalChannel),
        across(across_transport, tuning, nullptr, kAcrossChannel) {}
  bool consecutive(std::size_t host) const;
  std::vector<std::vector<int>> ranks;  // [host][place]
  GroupTransport local_transport, across_transport;
  Collectives local, across;
};

Collectives::Collectives(Transport& transport, CollectiveTuning tuning, StagedCollectives* staged, std::uint32_t channel)
    : t_(transport), tuning_(tuning), staged_(staged), channel_(channel) {
  if (channel > 3) throw std::invalid_argument("collectives: tag channel " + std::to_string(channel) + " is not 0-3");
  if (tuning_.by_host_bytes != CollectiveTuning::kNever && !staged_)
    if (const auto groups = host_groups(t_.hosts(), t_.rank())) by_host_ = std::make_unique<ByHost>(t_, *groups, tuning_);
}

Collectives::~Collectives() = default;

char* Collectives::scratch(std::size_t bytes, int which) {
  auto& buffer = scratch_[which];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// Reads `input` (the caller's send buffer, never written) and leaves block b reduced in `data`
// where the ring put it; so no copy of the input first. Each step moves in chunks of
// tuning_.chunk_bytes, so a received chunk is reduced while it is still in cache. Every rank walks
// the same pieces (as many as the largest block needs) with the same tags, whatever its own
// blocks' sizes: a rank whose blocks need one piece fewer must not fall a tag behind its
// neighbours (blocks differ by one element; at a chunk boundary that was a hang).
void Collectives::ring_reduce_scatter(const char* input, char* data, DataType type, ReduceOp op,
                                      const std::vector<std::size_t>& offsets, std::uint32_t& step) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t element = size_of(type);
  const std::size_t chunk = std::max<std::size_t>(1, tuning_.chunk_bytes / element);
  std::size_t largest = 0;
  for (int b = 0; b < n; ++b) largest = std::max(largest, offsets[static_cast<std::size_t>(b) + 1] - offsets[static_cast<std::size_t>(b)]);
  const std::size_t pieces = (largest + chunk - 1) / chunk;
  if (t_.overlaps_transfers()) {
    // Over a network: a step's pieces all travel at once, each reduced as it lands (while the
    // next ones still travel) instead of one round trip per piece. One tag per step.
    const std::size_t piece = std::max(std::max<std::size_t>(1, tuning_.piece_bytes / element), (largest + Transport::kMaxPieces - 1) / Transport::kMaxPieces);
    char* arriving = scratch(largest * element, 1);
    for (int s = 0; s < n - 1; ++s, ++step) {
      const auto send_block = static_cast<std::size_t>(mod(r - s - 1, n));
      const auto recv_block = static_cast<std::size_t>(mod(r - s - 2, n));
      const char* source = (s == 0 ? input : data) + offsets[send_block] * element;
      const std::size_t send_bytes = (offsets[send_block + 1] - offsets[send_block]) * element;
      const std::size_t recv_bytes = (offsets[recv_block + 1] - offsets[recv_block]) * element;
      const std::size_t base = offsets[recv_block] * element;
      t_.exchange_pieces(send_bytes ? mod(r + 1, n) : -1, source, send_bytes, recv_bytes ? mod(r - 1, n) : -1, arriving, recv_bytes,
                         tag(step), piece * element, [&](std::size_t offset, std::size_t bytes) {
                           reduce_pair(data + base + offset, input + base + offset, arriving + offset, bytes / element, type, op);
                         });
    }
    return;
  }
  char* incoming = scratch(std::min(largest, chunk) * element, 1);
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
      t_.exchange(sending ? mod(r + 1, n) : -1, source + first * element, sending * element, receiving ? mod(r - 1, n) : -1, incoming,
                  receiving * element, tag(step));
      const std::size_t at = (offsets[recv_block] + first) * element;
      if (receiving) reduce_pair(data + at, input + at, incoming, receiving, type, op);
    }
  }
}

void Collectives::ring_all_gather(char* data, std::size_t element, const std::vector<std::size_t>& offsets, std::uint32_t& step) {
  const int n = t_.size(), r = t_.rank();
  for (int s = 0; s < n - 1; ++s) {
    const auto send_block = static_cast<std::size_t>(mod(r - s, n));
    const auto recv_block = static_cast<std::size_t>(mod(r - s - 1, n));
    t_.exchange(mod(r + 1, n), data + offsets[send_block] * element, (offsets[send_block + 1] - offsets[send_block]) * element,
                mod(r - 1, n), data + offsets[recv_block] * element, (offsets[recv_block + 1] - offsets[recv_block]) * element,
                tag(step++));
  }
}

void Collectives::recursive_doubling(char* data, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t bytes = count * size_of(type);
  int pow2 = 1;
  while (pow2 * 2 <= n) pow2 *= 2;
  char* incoming = scratch(bytes, 1);
  std::uint32_t step = 0;
  // Ranks beyond the largest power of two fold into a partner first and get the result last.
  if (r >= pow2) {
    t_.send(r - pow2, data, bytes, tag(step));
    t_.recv(r - pow2, data, bytes, tag(0xffe));
    return;
  }
  if (r + pow2 < n) {
    t_.recv(r + pow2, incoming, bytes, tag(step));
    reduce_into(data, incoming, count, type, op);
  }
  ++step;
  for (int distance = 1; distance < pow2; distance *= 2, ++step) {
    const int partner = r ^ distance;
    t_.exchange(partner, data, bytes, partner, incoming, bytes, tag(step));
    // Same operand order on both partners, so floating-point results agree bit for bit.
    if (partner < r) {
      std::memcpy(scratch(bytes, 0), data, bytes);
      std::memcpy(data, incoming, bytes);
      reduce_into(data, scratch(bytes, 0), count, type, op);
    } else {
      reduce_into(data, incoming, count, type, op);
    }
  }
  if (r + pow2 < n) t_.send(r + pow2, data, bytes, tag(0xffe));
}

std::vector<RemoteRegion> Collectives::share_regions(const std::vector<RemoteRegion>& mine, std::uint32_t& step) {
  // Also the start signal: a rank sends its regions once its input is in place.
  const int n = t_.size(), r = t_.rank();
  const std::size_t k = mine.size(), bytes = k * sizeof(RemoteRegion);
  std::vector<RemoteRegion> all(static_cast<std::size_t>(n) * k);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * k));
  for (int s = 1; s < n; ++s) {
    const int from = mod(r - s, n);
    t_.exchange(mod(r + s, n), mine.data(), bytes, from, all.data() + static_cast<std::size_t>(from) * k, bytes, tag(step++));
  }
  return all;
}

void Collectives::direct_barrier(std::uint32_t& step) {
  char token = 0, incoming = 0;
  const int n = t_.size(), r = t_.rank();
  for (int distance = 1; distance < n; distance *= 2)  // dissemination
    t_.exchange(mod(r + distance, n), &token, 1, mod(r - distance, n), &incoming, 1, tag(step++));
}

// out = own op (every peer's region at `offset`), `count` elements, one chunk at a time: a chunk
// of a peer's input is read into scratch (in cache) and folded into the chunk of out at once.
void Collectives::reduce_block_from_peers(const char* own, char* out, const std::vector<RemoteRegion>& inputs, std::size_t offset,
                                          std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t element = size_of(type);
  const std::size_t chunk = std::max<std::size_t>(1, tuning_.chunk_bytes / element);
  char* incoming = scratch(std::min(chunk, count) * element, 1);
  for (std::size_t first = 0; first < count; first += chunk) {
    const std::size_t elements = std::min(chunk, count - first), at = first * element;
    for (int s = 1; s < n; ++s) {
      const int peer = mod(r + s, n);
      t_.read(peer, inputs[static_cast<std::size_t>(peer)], offset + at, incoming, elements * element);
      reduce_pair(out + at, s == 1 ? own + at : out + at, incoming, elements, type, op);
    }
  }
}

void Collectives::direct_all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t element = size_of(type), bytes = count * element;
  char* data = static_cast<char*>(recv);
  const auto offsets = block_offsets(count, n);
  std::uint32_t step = 0;
  const auto regions = share_regions({t_.expose(send, bytes), t_.expose(recv, bytes)}, step);
  std::vector<RemoteRegion> inputs(static_cast<std::size_t>(n)), results(static_cast<std::size_t>(n));
  for (std::size_t q = 0; q < static_cast<std::size_t>(n); ++q) inputs[q] = regions[2 * q], results[q] = regions[2 * q + 1];
  // Reduce-scatter: this rank's block from everyone's input. In place, peers read only the other
  // blocks of this buffer, so writing our block while they read is safe.
  const auto mine = static_cast<std::size_t>(r);
  const std::size_t first = offsets[mine], elements = offsets[mine + 1] - first;
  reduce_block_from_peers(static_cast<const char*>(send) + first * element, data + first * element, inputs, first * element,
                          elements, type, op);
  if (op == ReduceOp::avg) divide_for_average(data + first * element, elements, type, n);
  direct_barrier(step);  // every block is final
  // All-gather: the other blocks from their owners' results.
  for (int s = 1; s < n; ++s) {
    const auto q = static_cast<std::size_t>(mod(r + s, n));
    const std::size_t at = offsets[q] * element;
    t_.read(static_cast<int>(q), results[q], at, data + at, (offsets[q + 1] - offsets[q]) * element);
  }
  direct_barrier(step);  // nobody reads our buffers any more: the caller may change them
}

void Collectives::direct_all_gather(const void* send, void* recv, std::size_t count, DataType type) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t block = count * size_of(type);
  char* data = static_cast<char*>(recv);
  std::uint32_t step = 0;
  // Peers read our send buffer (in place it is our block of recv), so they need not wait for the copy.
  const auto regions = share_regions({t_.expose(send, block)}, step);
  char* own = data + static_cast<std::size_t>(r) * block;
  if (send != own) std::memcpy(own, send, block);
  for (int s = 1; s < n; ++s) {
    const auto q = static_cast<std::size_t>(mod(r + s, n));
    t_.read(static_cast<int>(q), regions[q], 0, data + q * block, block);
  }
  direct_barrier(step);
}

void Collectives::direct_reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t block = count * size_of(type);
  std::uint32_t step = 0;
  const auto regions = share_regions({t_.expose(send, block * static_cast<std::size_t>(n))}, step);
  // In place our block of send is recv: peers read the other blocks only.
  const std::size_t at = static_cast<std::size_t>(r) * block;
  reduce_block_from_peers(static_cast<const char*>(send) + at, static_cast<char*>(recv), regions, at, count, type, op);
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
  direct_barrier(step);
}

// The host's ranks reduce-scatter the buffer among themselves; each then all_reduces its block
// with the ranks at its place on the other hosts (all those groups at once, each over its own
// connections); the host's ranks all-gather the results. An average sums throughout and divides
// each block by the job's size once, before it is shared.
void Collectives::all_reduce_by_host(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  Collectives& local = by_host_->local;
  const std::size_t element = size_of(type);
  const ReduceOp partial = op == ReduceOp::avg ? ReduceOp::sum : op;
  char* data = static_cast<char*>(recv);
  const auto offsets = block_offsets(count, local.t_.size());
  std::uint32_t step = 0;
  local.ring_reduce_scatter(static_cast<const char*>(send), data, type, partial, offsets, step);
  const auto mine = static_cast<std::size_t>(local.t_.rank());
  char* block = data + offsets[mine] * element;
  const std::size_t elements = offsets[mine + 1] - offsets[mine];
  by_host_->across.all_reduce(block, block, elements, type, partial);
  if (op == ReduceOp::avg) divide_for_average(block, elements, type, t_.size());
  local.ring_all_gather(data, element, offsets, step);
  local.next();
}

// Where a host's ranks are consecutive (srun's default block distribution), their blocks lie
// together in the job's buffer, and the host's steps work on them there instead of through scratch.
bool Collectives::ByHost::consecutive(std::size_t host) const {
  const auto& on_host = ranks[host];
  for (std::size_t p = 0; p < on_host.size(); ++p)
    if (on_host[p] != on_host[0] + static_cast<int>(p)) return false;
  return true;
}

// The ranks at this place on every host gather their blocks (a column: one block per host, in host
// order); then for each host, its ranks gather that host's entries of their columns, which are the
// blocks of that host's ranks.
void Collectives::all_gather_by_host(const void* send, void* recv, std::size_t count, DataType type) {
  const auto& ranks = by_host_->ranks;
  const std::size_t hosts = ranks.size(), places = ranks[0].size(), block = count * size_of(type);
  char* column = scratch(hosts * block, 0);
  by_host_->across.all_gather(send, column, count, type);
  char* const out = static_cast<char*>(recv);
  for (std::size_t h = 0; h < hosts; ++h) {
    if (by_host_->consecutive(h)) {
      by_host_->local.all_gather(column + h * block, out + static_cast<std::size_t>(ranks[h][0]) * block, count, type);
      continue;
    }
    char* gathered = scratch(places * block, 1);
    by_host_->local.all_gather(column + h * block, gathered, count, type);
    for (std::size_t p = 0; p < places; ++p) std::memcpy(out + static_cast<std::size_t>(ranks[h][p]) * block, gathered + p * block, block);
  }
}

// For each host, the host's ranks reduce-scatter that host's blocks, so each holds entry h of its
// column (the block of host h's rank at its place, summed over this host); the ranks at this place
// on every host then reduce-scatter the column, so each holds its own block summed over all.
void Collectives::reduce_scatter_by_host(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const auto& ranks = by_host_->ranks;
  const std::size_t hosts = ranks.size(), places = ranks[0].size(), block = count * size_of(type);
  const ReduceOp partial = op == ReduceOp::avg ? ReduceOp::sum : op;
  char* column = scratch(hosts * block, 0);
  const char* const in = static_cast<const char*>(send);
  for (std::size_t h = 0; h < hosts; ++h) {
    const char* blocks = in + static_cast<std::size_t>(ranks[h][0]) * block;
    if (!by_host_->consecutive(h)) {
      char* gathered = scratch(places * block, 1);
      for (std::size_t p = 0; p < places; ++p) std::memcpy(gathered + p * block, in + static_cast<std::size_t>(ranks[h][p]) * block, block);
      blocks = gathered;
    }
    by_host_->local.reduce_scatter(blocks, column + h * block, count, type, partial);
  }
  by_host_->across.reduce_scatter(column, recv, count, type, partial);
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, t_.size());
}

void Collectives::all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size();
  const std::size_t bytes = count * size_of(type);
  if (staged(bytes)) {
    staged_->all_reduce(send, recv, count, type, op);
    next();
    return;
  }
  if (by_host(bytes, count)) {
    all_reduce_by_host(send, recv, count, type, op);
    next();
    return;
  }
  if (n > 1 && count >= static_cast<std::size_t>(n) && t_.can_read_remote() && bytes >= tuning_.direct_all_reduce_bytes) {
    direct_all_reduce(send, recv, count, type, op);
    next();
    return;
  }
  if (n == 1 && send != recv && bytes) std::memmove(recv, send, bytes);
  if (n > 1 && count > 0) {
    char* data = static_cast<char*>(recv);
    if (bytes <= kSmallAllReduceBytes || count < static_cast<std::size_t>(n)) {
      if (send != recv) std::memmove(recv, send, bytes);
      recursive_doubling(data, count, type, op);
    } else {
      const auto offsets = block_offsets(count, n);
      std::uint32_t step = 0;
      ring_reduce_scatter(static_cast<const char*>(send), data, type, op, offsets, step);
      ring_all_gather(data, size_of(type), offsets, step);
    }
  }
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
  next();
}

void Collectives::all_gather(const void* send, void* recv, std::size_t count, DataType type) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t element = size_of(type);
  if (staged(count * element * static_cast<std::size_t>(n))) {
    staged_->all_gather(send, recv, count, type);
    next();
    return;
  }
  if (by_host(count * element * static_cast<std::size_t>(n), count * static_cast<std::size_t>(n))) {
    all_gather_by_host(send, recv, count, type);
    next();
    return;
  }
  if (n > 1 && count > 0 && t_.can_read_remote() && count * element * static_cast<std::size_t>(n) >= tuning_.direct_all_gather_bytes) {
    direct_all_gather(send, recv, count, type);
    next();
    return;
  }
  char* data = static_cast<char*>(recv);
  char* own = data + static_cast<std::size_t>(r) * count * element;
  if (send != own && count) std::memmove(own, send, count * element);
  if (n > 1 && count > 0) {
    std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
    for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = static_cast<std::size_t>(b) * count;
    std::uint32_t step = 0;
    ring_all_gather(data, element, offsets, step);
  }
  next();
}

void Collectives::reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t element = size_of(type);
  const std::size_t total = count * static_cast<std::size_t>(n) * element;
  if (staged(total)) {
    staged_->reduce_scatter(send, recv, count, type, op);
    next();
    return;
  }
  if (by_host(total, count * static_cast<std::size_t>(n))) {
    reduce_scatter_by_host(send, recv, count, type, op);
    next();
    return;
  }
  if (n > 1 && count > 0 && t_.can_read_remote() && total >= tuning_.direct_reduce_scatter_bytes) {
    direct_reduce_scatter(send, recv, count, type, op);
    next();
    return;
  }
  char* work = scratch(total, 0);
  if (n == 1 && total) std::memcpy(work, send, total);
  if (n > 1 && count > 0) {
    std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
    for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = static_cast<std::size_t>(b) * count;
    std::uint32_t step = 0;
    ring_reduce_scatter(static_cast<const char*>(send), work, type, op, offsets, step);
  }
  if (count) std::memmove(recv, work + static_cast<std::size_t>(r) * count * element, count * element);
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
  next();
}

void Collectives::broadcast(const void* send, void* recv, std::size_t count, DataType type, int root) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t bytes = count * size_of(type);
  if (r == root && send != recv && bytes) std::memmove(recv, send, bytes);
  if (n > 1 && bytes) {
    const int relative = mod(r - root, n);
    int mask = 1;
    while (mask < n) {  // receive from the parent
      if (relative & mask) {
        t_.recv(mod(relative - mask + root, n), recv, bytes, tag(0));
        break;
      }
      mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)  // forward to children
      if (relative + mask < n) t_.send(mod(relative + mask + root, n), recv, bytes, tag(0));
  }
  next();
}

void Collectives::reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t bytes = count * size_of(type);
  char* accumulator = r == root ? static_cast<char*>(recv) : scratch(bytes, 0);
  if (bytes && accumulator != send) std::memmove(accumulator, send, bytes);
  if (n > 1 && bytes) {
    const int relative = mod(r - root, n);
    char* incoming = scratch(bytes, 1);
    for (int mask = 1; mask < n; mask <<= 1) {
      if (relative & mask) {
        t_.send(mod(relative - mask + root, n), accumulator, bytes, tag(0));
        break;
      }
      if (relative + mask < n) {
        t_.recv(mod(relative + mask + root, n), incoming, bytes, tag(0));
        reduce_into(accumulator, incoming, count, type, op);
      }
    }
  }
  if (r == root && op == ReduceOp::avg) divide_for_average(recv, count, type, n);
  next();
}

void Collectives::alltoall(const void* send, void* recv, std::size_t count, DataType type) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t block = count * size_of(type);
  const char* source = static_cast<const char*>(send);
  if (send == recv && block) {  // in place: send from a copy
    char* copy = scratch(block * static_cast<std::size_t>(n), 0);
    std::memcpy(copy, send, block * static_cast<std::size_t>(n));
    source = copy;
  }
  char* target = static_cast<char*>(recv);
  if (block) std::memmove(target + static_cast<std::size_t>(r) * block, source + static_cast<std::size_t>(r) * block, block);
  for (int s = 1; s < n && block; ++s) {
    const int to = mod(r + s, n), from = mod(r - s, n);
    t_.exchange(to, source + static_cast<std::size_t>(to) * block, block, from, target + static_cast<std::size_t>(from) * block, block,
                tag(static_cast<std::uint32_t>(s)));
  }
  next();
}

void Collectives::sendrecv(const void* send, void* recv, std::size_t count, DataType type) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t bytes = count * size_of(type);
  const void* source = send;
  if (send == recv && bytes) {
    char* copy = scratch(bytes, 0);
    std::memcpy(copy, send, bytes);
    source = copy;
  }
  if (bytes) t_.exchange(mod(r + 1, n), source, bytes, mod(r - 1, n), recv, bytes, tag(0));
  next();
}

void Collectives::barrier() {
  char token = 0, incoming = 0;
  const int n = t_.size(), r = t_.rank();
  for (int distance = 1; distance < n; distance *= 2)  // dissemination barrier
    t_.exchange(mod(r + distance, n), &token, 1, mod(r - distance, n), &incoming, 1, tag(static_cast<std::uint32_t>(distance)));
  next();
}

}  // namespace gpudirect::comm
