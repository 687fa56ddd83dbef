// Binomial tree broadcast: a rank receives the buffer from its parent, then forwards it to its
// children, farthest first; log2(n) rounds, each rank receiving once.
#include "comm/algorithms/algorithms.hpp"

#include <cstring>

namespace gpudirect::comm {

void tree_broadcast(const Call& call, const void* send, void* recv, std::size_t count, DataType type, int root) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t bytes = count * size_of(type);
  if (r == root && send != recv && bytes) std::memmove(recv, send, bytes);
  if (n > 1 && bytes) {
    const int relative = mod(r - root, n);
    int mask = 1;
    while (mask < n) {  // receive from the parent
      if (relative & mask) {
        t.recv(mod(relative - mask + root, n), recv, bytes, call.tag(0));
        break;
      }
      mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)  // forward to children
      if (relative + mask < n) t.send(mod(relative + mask + root, n), recv, bytes, call.tag(0));
  }
}

}  // namespace gpudirect::comm
