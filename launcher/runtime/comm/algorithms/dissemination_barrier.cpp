// Dissemination barrier: in round k each rank signals the rank 2^k ahead and waits for the one 2^k
// behind; after log2(n) rounds every rank has heard, directly or not, from every other.
#include "comm/algorithms/algorithms.hpp"

namespace gpudirect::comm {

void dissemination_barrier(const Call& call) {
  Transport& t = call.t;
  char token = 0, incoming = 0;
  const int n = t.size(), r = t.rank();
  for (int distance = 1; distance < n; distance *= 2)
    t.exchange(mod(r + distance, n), &token, 1, mod(r - distance, n), &incoming, 1, call.tag(static_cast<std::uint32_t>(distance)));
}

}  // namespace gpudirect::comm
