// Which of the allocation's nodes train, which wait as spares, and which were taken out: the
// supervisor's whole bookkeeping of nodes, pure so its rules are tested on their own.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpudirect::launcher::supervise {

class NodePool {
 public:
  // The allocation's nodes in Slurm's order; the last `spares` wait. Throws std::invalid_argument
  // when no node would train.
  NodePool(std::vector<std::string> nodes, int spares);

  const std::vector<std::string>& training() const { return training_; }
  const std::vector<std::string>& spares() const { return spares_; }
  const std::vector<std::string>& taken_out() const { return taken_out_; }
  bool is_training(const std::string& node) const;

  // A training node found bad: out of the training set for good.
  void take_out(const std::string& node);
  // The next spare, removed from the spares (nullopt when none is left). The caller checks it and
  // either trains on it (add_training) or takes it out (take_out_spare).
  std::optional<std::string> take_spare();
  void add_training(const std::string& node);
  void take_out_spare(const std::string& node);

  // A node a fault pointed at but whose check found nothing: the first time, the fault counts as
  // transient and the node trains on (returns true); the next time it is taken out (false).
  bool forgive_once(const std::string& node);

 private:
  std::vector<std::string> order_;  // the allocation's order: training nodes are kept in it
  std::vector<std::string> training_, spares_, taken_out_;
  std::set<std::string> forgiven_;
};

}  // namespace gpudirect::launcher::supervise
