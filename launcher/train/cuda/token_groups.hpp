// The positions of a micro-batch grouped by token id, for the deterministic wte gradient on the GPU
// (each token's rows summed in position order by one block, instead of racing atomics).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpudirect::train::cuda {

struct TokenGroups {
  std::vector<std::int32_t> tokens;     // distinct token ids, ascending
  std::vector<std::int32_t> offsets;    // tokens.size() + 1: group g is positions[offsets[g], offsets[g+1])
  std::vector<std::int32_t> positions;  // every index into the batch once, ascending within a group
};

// A stable counting sort over [0, vocab). Throws std::invalid_argument for a token outside it.
TokenGroups group_by_token(std::span<const std::int32_t> tokens, int vocab);

}  // namespace gpudirect::train::cuda
