#include "train/cuda/token_groups.hpp"

#include <stdexcept>
#include <string>

namespace gpudirect::train::cuda {

TokenGroups group_by_token(std::span<const std::int32_t> tokens, int vocab) {
  std::vector<std::int32_t> count(static_cast<std::size_t>(vocab) + 1, 0);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw std::invalid_argument("group_by_token: token " + std::to_string(tokens[i]) + " at [" + std::to_string(i) +
                                  "] is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    ++count[static_cast<std::size_t>(tokens[i]) + 1];
  }
  TokenGroups groups;
  for (int t = 0; t < vocab; ++t) {
    if (count[static_cast<std::size_t>(t) + 1] == 0) continue;
    groups.tokens.push_back(t);
  }
  // count becomes the start of each token's run among the sorted positions.
  for (std::size_t t = 1; t < count.size(); ++t) count[t] += count[t - 1];
  groups.offsets.reserve(groups.tokens.size() + 1);
  for (const std::int32_t t : groups.tokens) groups.offsets.push_back(count[static_cast<std::size_t>(t)]);
  groups.offsets.push_back(static_cast<std::int32_t>(tokens.size()));
  groups.positions.resize(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i)
    groups.positions[static_cast<std::size_t>(count[static_cast<std::size_t>(tokens[i])]++)] = static_cast<std::int32_t>(i);
  return groups;
}

}  // namespace gpudirect::train::cuda
