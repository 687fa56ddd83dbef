// Recursive doubling all_reduce: in round k each rank exchanges its whole buffer with the rank 2^k
// away and reduces, so log2(n) rounds instead of a ring's 2(n-1) steps. Ranks beyond the largest
// power of two fold into a partner first and get the result last.
#include "comm/algorithms/algorithms.hpp"

#include "comm/reduce_kernels.hpp"

#include <cstring>

namespace gpudirect::comm {

void recursive_doubling_all_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  Transport& t = call.t;
  const int n = t.size(), r = t.rank();
  const std::size_t bytes = count * size_of(type);
  char* data = static_cast<char*>(recv);
  if (send != recv) std::memmove(recv, send, bytes);
  int pow2 = 1;
  while (pow2 * 2 <= n) pow2 *= 2;
  char* incoming = call.scratch(bytes, 1);
  std::uint32_t step = 0;
  if (r >= pow2) {
    t.send(r - pow2, data, bytes, call.tag(step));
    t.recv(r - pow2, data, bytes, call.tag(0xffe));
  } else {
    if (r + pow2 < n) {
      t.recv(r + pow2, incoming, bytes, call.tag(step));
      reduce_into(data, incoming, count, type, op);
    }
    ++step;
    for (int distance = 1; distance < pow2; distance *= 2, ++step) {
      const int partner = r ^ distance;
      t.exchange(partner, data, bytes, partner, incoming, bytes, call.tag(step));
      // Same operand order on both partners, so floating-point results agree bit for bit.
      if (partner < r) {
        std::memcpy(call.scratch(bytes, 0), data, bytes);
        std::memcpy(data, incoming, bytes);
        reduce_into(data, call.scratch(bytes, 0), count, type, op);
      } else {
        reduce_into(data, incoming, count, type, op);
      }
    }
    if (r + pow2 < n) t.send(r + pow2, data, bytes, call.tag(0xffe));
  }
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
}

}  // namespace gpudirect::comm
