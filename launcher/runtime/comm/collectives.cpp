#include "comm/collectives.hpp"

#include "comm/reduce_kernels.hpp"

#include <cstring>

namespace gpudirect::comm {
namespace {

// Block b of n covers elements [offsets[b], offsets[b+1]): sizes differ by at most one.
std::vector<std::size_t> block_offsets(std::size_t count, int n) {
  std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
  for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = count * static_cast<std::size_t>(b) / static_cast<std::size_t>(n);
  return offsets;
}

int mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace

char* Collectives::scratch(std::size_t bytes, int which) {
  auto& buffer = scratch_[which];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

void Collectives::ring_reduce_scatter(char* data, std::size_t count, DataType type, ReduceOp op,
                                      const std::vector<std::size_t>& offsets, std::uint32_t& step) {
  (void)count;
  const int n = t_.size(), r = t_.rank();
  const std::size_t element = size_of(type);
  std::size_t largest = 0;
  for (int b = 0; b < n; ++b) largest = std::max(largest, offsets[static_cast<std::size_t>(b) + 1] - offsets[static_cast<std::size_t>(b)]);
  char* incoming = scratch(largest * element, 1);
  // After step s rank r holds the sum of s+2 contributions of block r-s-2; the last step leaves block r.
  for (int s = 0; s < n - 1; ++s) {
    const auto send_block = static_cast<std::size_t>(mod(r - s - 1, n));
    const auto recv_block = static_cast<std::size_t>(mod(r - s - 2, n));
    const std::size_t send_count = offsets[send_block + 1] - offsets[send_block];
    const std::size_t recv_count = offsets[recv_block + 1] - offsets[recv_block];
    t_.exchange(mod(r + 1, n), data + offsets[send_block] * element, send_count * element, mod(r - 1, n), incoming,
                recv_count * element, tag(step++));
    reduce_into(data + offsets[recv_block] * element, incoming, recv_count, type, op);
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

void Collectives::all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size();
  const std::size_t bytes = count * size_of(type);
  if (send != recv && bytes) std::memmove(recv, send, bytes);
  if (n > 1 && count > 0) {
    char* data = static_cast<char*>(recv);
    if (bytes <= kSmallAllReduceBytes || count < static_cast<std::size_t>(n)) {
      recursive_doubling(data, count, type, op);
    } else {
      const auto offsets = block_offsets(count, n);
      std::uint32_t step = 0;
      ring_reduce_scatter(data, count, type, op, offsets, step);
      ring_all_gather(data, size_of(type), offsets, step);
    }
  }
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
  next();
}

void Collectives::all_gather(const void* send, void* recv, std::size_t count, DataType type) {
  const int n = t_.size(), r = t_.rank();
  const std::size_t element = size_of(type);
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
  char* work = scratch(total, 0);
  if (total) std::memcpy(work, send, total);
  if (n > 1 && count > 0) {
    std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
    for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = static_cast<std::size_t>(b) * count;
    std::uint32_t step = 0;
    ring_reduce_scatter(work, count * static_cast<std::size_t>(n), type, op, offsets, step);
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
