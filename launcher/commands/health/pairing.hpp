// Which nodes run together: disjoint pairs for the first pass (so every pair runs at the same
// time), a second pass that puts each suspect next to a node that passed (so the verdict names
// which node of a failing pair is at fault), and growing disjoint groups (4, 8, ...) on request.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpudirect::launcher::health {

using NodePair = std::pair<std::string, std::string>;

struct FirstPass {
  std::vector<NodePair> pairs;  // (0,1), (2,3), ... in the given order
  std::string left_over;        // the last node of an odd count ("" when even): it joins the second pass
};

FirstPass first_pass_pairs(const std::vector<std::string>& nodes);

// Rounds of disjoint pairs: each suspect once with a good node, spreading suspects over the good
// nodes so one round uses each good node at most once (min(#suspects, #good) pairs per round).
// No good node: no rounds (the suspects stay undecided).
std::vector<std::vector<NodePair>> second_pass_rounds(const std::vector<std::string>& suspects, const std::vector<std::string>& good);

// Disjoint groups of `size` nodes in the given order; the nodes that do not fill a last group are
// left out. Sizes 4, 8, 16 ... up to the number of nodes: growing_group_sizes(10) is {4, 8}.
std::vector<std::vector<std::string>> groups_of(const std::vector<std::string>& nodes, std::size_t size);
std::vector<std::size_t> growing_group_sizes(std::size_t nodes);

}  // namespace gpudirect::launcher::health
