#include "health/pairing.hpp"

namespace gpudirect::launcher::health {

FirstPass first_pass_pairs(const std::vector<std::string>& nodes) {
  FirstPass pass;
  for (std::size_t i = 0; i + 1 < nodes.size(); i += 2) pass.pairs.emplace_back(nodes[i], nodes[i + 1]);
  if (nodes.size() % 2 == 1) pass.left_over = nodes.back();
  return pass;
}

std::vector<std::vector<NodePair>> second_pass_rounds(const std::vector<std::string>& suspects, const std::vector<std::string>& good) {
  std::vector<std::vector<NodePair>> rounds;
  if (good.empty()) return rounds;
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    if (i % good.size() == 0) rounds.emplace_back();
    rounds.back().emplace_back(suspects[i], good[i % good.size()]);
  }
  return rounds;
}

std::vector<std::vector<std::string>> groups_of(const std::vector<std::string>& nodes, std::size_t size) {
  std::vector<std::vector<std::string>> groups;
  if (size == 0) return groups;
  for (std::size_t i = 0; i + size <= nodes.size(); i += size)
    groups.emplace_back(nodes.begin() + static_cast<long>(i), nodes.begin() + static_cast<long>(i + size));
  return groups;
}

std::vector<std::size_t> growing_group_sizes(std::size_t nodes) {
  std::vector<std::size_t> sizes;
  for (std::size_t size = 4; size <= nodes; size *= 2) sizes.push_back(size);
  return sizes;
}

}  // namespace gpudirect::launcher::health
