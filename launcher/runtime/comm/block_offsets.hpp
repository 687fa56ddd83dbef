// How the all_reduce algorithms split `count` elements among n ranks: block b covers elements
// [offsets[b], offsets[b+1]), sizes differ by at most one. One rule for every algorithm, so the ring,
// the direct reads and staging agree on who owns what.
#pragma once

#include <cstddef>
#include <vector>

namespace gpudirect::comm {

inline std::vector<std::size_t> block_offsets(std::size_t count, int n) {
  std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
  for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = count * static_cast<std::size_t>(b) / static_cast<std::size_t>(n);
  return offsets;
}

}  // namespace gpudirect::comm
