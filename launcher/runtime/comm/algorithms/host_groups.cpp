#include "comm/algorithms/host_groups.hpp"

#include <algorithm>
#include <cstddef>

namespace gpudirect::comm {

std::optional<HostGroups> host_groups(const std::vector<std::string>& hosts, int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= hosts.size()) return std::nullopt;
  // Hosts in the order of their lowest rank, each with its ranks ascending.
  std::vector<std::string> names;
  std::vector<std::vector<int>> ranks_of;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    const auto found = std::find(names.begin(), names.end(), hosts[r]);
    if (found == names.end()) {
      names.push_back(hosts[r]);
      ranks_of.push_back({static_cast<int>(r)});
    } else {
      ranks_of[static_cast<std::size_t>(found - names.begin())].push_back(static_cast<int>(r));
    }
  }
  const std::size_t per_host = ranks_of[0].size();
  if (names.size() < 2 || per_host < 2 ||
      std::any_of(ranks_of.begin(), ranks_of.end(), [&](const std::vector<int>& ranks) { return ranks.size() != per_host; }))
    return std::nullopt;
  HostGroups groups;
  groups.ranks = ranks_of;
  const auto host = static_cast<std::size_t>(std::find(names.begin(), names.end(), hosts[static_cast<std::size_t>(rank)]) - names.begin());
  groups.local = ranks_of[host];
  const auto place = static_cast<std::size_t>(std::find(groups.local.begin(), groups.local.end(), rank) - groups.local.begin());
  for (const auto& ranks : ranks_of) groups.across.push_back(ranks[place]);
  return groups;
}

}  // namespace gpudirect::comm
