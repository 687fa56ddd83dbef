// sendrecv as one exchange: to the next rank on the ring, from the previous one.
#include "comm/algorithms/algorithms.hpp"

#include <cstring>

namespace gpudirect::comm {

void neighbour_sendrecv(const Call& call, const void* send, void* recv, std::size_t count, DataType type) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t bytes = count * size_of(type);
  const void* source = send;
  if (send == recv && bytes) {  // in place: send from a copy
    char* copy = call.scratch(bytes, 0);
    std::memcpy(copy, send, bytes);
    source = copy;
  }
  if (bytes) t.exchange(mod(r + 1, n), source, bytes, mod(r - 1, n), recv, bytes, call.tag(0));
}

}  // namespace gpudirect::comm
