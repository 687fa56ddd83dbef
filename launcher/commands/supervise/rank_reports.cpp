#include "supervise/rank_reports.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

namespace gpudirect::launcher::supervise {
namespace {

struct Tally {
  std::vector<std::string> order;
  std::map<std::string, int> count;
  void add(const std::string& host) {
    if (count[host]++ == 0) order.push_back(host);
  }
  std::vector<std::string> ranked() const {
    std::vector<std::string> out = order;
    std::stable_sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) { return count.at(a) > count.at(b); });
    return out;
  }
};

}  // namespace

std::vector<std::string> blamed_hosts(const std::string& output, const std::vector<std::string>& rank_hosts) {
  // The runtime's messages (fabric_transport, staged_collectives, tcp_store) and srun's.
  static const std::regex lost_peer(R"(rank [0-9]+ on ([A-Za-z0-9._-]+) (?:is unreachable|made no progress|did not contribute))");
  static const std::regex cannot_read(R"(cannot read rank ([0-9]+))");
  static const std::regex never_reached(R"(rank ([0-9]+) of [0-9]+ never reached the rendezvous)");
  static const std::regex node_failure(R"(^srun: error: Node failure on ([A-Za-z0-9._-]+))");
  static const std::regex gone(R"(rank [0-9]+ on ([A-Za-z0-9._-]+)(?: \(the rendezvous server\))? is gone)");
  Tally strong, weak;
  const auto host_of = [&](const std::string& rank) -> std::string {
    const unsigned long r = std::stoul(rank);
    return r < rank_hosts.size() ? rank_hosts[r] : std::string();
  };
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    const auto each = [&](const std::regex& pattern, auto&& take) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), pattern); it != std::sregex_iterator(); ++it) take((*it)[1].str());
    };
    each(lost_peer, [&](const std::string& host) { strong.add(host); });
    each(node_failure, [&](const std::string& host) { strong.add(host); });
    for (const std::regex* by_rank : {&cannot_read, &never_reached})
      each(*by_rank, [&](const std::string& rank) {
        if (const std::string host = host_of(rank); !host.empty()) strong.add(host);
      });
    each(gone, [&](const std::string& host) { weak.add(host); });
  }
  return strong.order.empty() ? weak.ranked() : strong.ranked();
}

std::vector<std::string> block_rank_hosts(const std::vector<std::string>& nodes, int tasks_per_node) {
  std::vector<std::string> hosts;
  for (const std::string& node : nodes)
    for (int i = 0; i < tasks_per_node; ++i) hosts.push_back(node);
  return hosts;
}

}  // namespace gpudirect::launcher::supervise
