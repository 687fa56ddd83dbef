// Binomial tree reduce: a rank reduces what its children send into its accumulator, then sends it
// to its parent; the root ends with the result after log2(n) rounds.
#include "comm/algorithms/algorithms.hpp"

#include "comm/reduce_kernels.hpp"

#include <cstring>

namespace gpudirect::comm {

void tree_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t bytes = count * size_of(type);
  char* accumulator = r == root ? static_cast<char*>(recv) : call.scratch(bytes, 0);
  if (bytes && accumulator != send) std::memmove(accumulator, send, bytes);
  if (n > 1 && bytes) {
    const int relative = mod(r - root, n);
    char* incoming = call.scratch(bytes, 1);
    for (int mask = 1; mask < n; mask <<= 1) {
      if (relative & mask) {
        t.send(mod(relative - mask + root, n), accumulator, bytes, call.tag(0));
        break;
      }
      if (relative + mask < n) {
        t.recv(mod(relative + mask + root, n), incoming, bytes, call.tag(0));
        reduce_into(accumulator, incoming, count, type, op);
      }
    }
  }
  if (r == root && op == ReduceOp::avg) divide_for_average(recv, count, type, n);
}

}  // namespace gpudirect::comm
