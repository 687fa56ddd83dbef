// Pairwise alltoall: in step s each rank sends its block for the rank s ahead and receives from the
// rank s behind, so every pair exchanges directly and no rank waits on a relay.
#include "comm/algorithms/algorithms.hpp"

#include <cstring>

namespace gpudirect::comm {

void pairwise_alltoall(const Call& call, const void* send, void* recv, std::size_t count, DataType type) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t block = count * size_of(type);
  const char* source = static_cast<const char*>(send);
  if (send == recv && block) {  // in place: send from a copy
    char* copy = call.scratch(block * static_cast<std::size_t>(n), 0);
    std::memcpy(copy, send, block * static_cast<std::size_t>(n));
    source = copy;
  }
  char* target = static_cast<char*>(recv);
  if (block) std::memmove(target + static_cast<std::size_t>(r) * block, source + static_cast<std::size_t>(r) * block, block);
  for (int s = 1; s < n && block; ++s) {
    const int to = mod(r + s, n), from = mod(r - s, n);
    t.exchange(to, source + static_cast<std::size_t>(to) * block, block, from, target + static_cast<std::size_t>(from) * block, block,
               call.tag(static_cast<std::uint32_t>(s)));
  }
}

}  // namespace gpudirect::comm
