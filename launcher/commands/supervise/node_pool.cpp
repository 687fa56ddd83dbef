#include "supervise/node_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpudirect::launcher::supervise {

NodePool::NodePool(std::vector<std::string> nodes, int spares) : order_(std::move(nodes)) {
  if (spares < 0 || static_cast<std::size_t>(spares) >= order_.size())
    throw std::invalid_argument("--spare-nodes " + std::to_string(spares) + " leaves no node to train on: the allocation has " +
                                std::to_string(order_.size()) + " node(s); ask sbatch for --nodes=TRAINING+SPARES");
  const auto split = order_.end() - spares;
  training_.assign(order_.begin(), split);
  spares_.assign(split, order_.end());
}

bool NodePool::is_training(const std::string& node) const { return std::find(training_.begin(), training_.end(), node) != training_.end(); }

void NodePool::take_out(const std::string& node) {
  const auto at = std::find(training_.begin(), training_.end(), node);
  if (at == training_.end()) return;
  training_.erase(at);
  taken_out_.push_back(node);
}

std::optional<std::string> NodePool::take_spare() {
  if (spares_.empty()) return std::nullopt;
  std::string node = spares_.front();
  spares_.erase(spares_.begin());
  return node;
}

void NodePool::add_training(const std::string& node) {
  training_.push_back(node);
  // Slurm gives ranks in the allocation's node order whatever -w says: keep that order here too.
  std::stable_sort(training_.begin(), training_.end(), [&](const std::string& a, const std::string& b) {
    return std::find(order_.begin(), order_.end(), a) < std::find(order_.begin(), order_.end(), b);
  });
}

void NodePool::take_out_spare(const std::string& node) { taken_out_.push_back(node); }

bool NodePool::forgive_once(const std::string& node) { return forgiven_.insert(node).second; }

}  // namespace gpudirect::launcher::supervise
