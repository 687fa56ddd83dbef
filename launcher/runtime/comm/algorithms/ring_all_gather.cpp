// Ring all-gather: step s passes on the block s behind this rank and receives the one s+1 behind,
// so after n-1 steps every rank holds every block.
#include "comm/algorithms/algorithms.hpp"

#include <cstring>

namespace gpudirect::comm {

void ring_all_gather_blocks(const Call& call, char* data, std::size_t element, const std::vector<std::size_t>& offsets,
                            std::uint32_t& step) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  for (int s = 0; s < n - 1; ++s) {
    const auto send_block = static_cast<std::size_t>(mod(r - s, n));
    const auto recv_block = static_cast<std::size_t>(mod(r - s - 1, n));
    t.exchange(mod(r + 1, n), data + offsets[send_block] * element, (offsets[send_block + 1] - offsets[send_block]) * element,
               mod(r - 1, n), data + offsets[recv_block] * element, (offsets[recv_block + 1] - offsets[recv_block]) * element,
               call.tag(step++));
  }
}

void ring_all_gather(const Call& call, const void* send, void* recv, std::size_t count, DataType type) {
  const int n = call.t.size(), r = call.t.rank();
  const std::size_t element = size_of(type);
  char* data = static_cast<char*>(recv);
  char* own = data + static_cast<std::size_t>(r) * count * element;
  if (send != own && count) std::memmove(own, send, count * element);
  if (n > 1 && count > 0) {
    std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
    for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = static_cast<std::size_t>(b) * count;
    std::uint32_t step = 0;
    ring_all_gather_blocks(call, data, element, offsets, step);
  }
}

}  // namespace gpudirect::comm
