// How the ranks of a job across hosts split for collectives by host (by_host.hpp): the ranks of
// this rank's host (`local`), and one rank of every host, the one at this rank's place among its
// host's ranks (`across`).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::comm {

struct HostGroups {
  std::vector<std::vector<int>> ranks;  // ranks[h][p]: the rank at place p on host h (hosts in the order of their lowest rank)
  std::vector<int> local;               // this rank's host's ranks, ascending (this rank's place: its index here)
  std::vector<int> across;              // the rank at this rank's place on every host
};

// `hosts[r]`: the host of rank r. None where there is one host, or where a host runs one rank (no
// gain), or where hosts run different numbers of ranks (the across groups would not line up), or
// where the list is empty (the transport does not know) or does not name `rank`.
std::optional<HostGroups> host_groups(const std::vector<std::string>& hosts, int rank);

}  // namespace gpudirect::comm
