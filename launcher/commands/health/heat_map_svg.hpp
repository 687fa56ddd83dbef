// The sweep as an SVG an admin opens in a browser, readable from 2 to hundreds of nodes: one tile
// per node (8 to a row) with a bar in its verdict's colour and one line per pair it ran in, that
// pair's busbw coloured against the threshold (red under it, yellow to green above, dark x for a
// failed or timed out job); under the tiles, one row per --groups size with a bar per group. A
// node x node matrix would be 98% empty at 64 nodes: each node runs with one to three peers.
#pragma once

#include "health/sweep_run.hpp"
#include "health/verdicts.hpp"

#include <string>
#include <vector>

namespace gpudirect::launcher::health {

std::string heat_map_svg(const std::vector<NodeVerdict>& nodes, const std::vector<SweepRun>& runs, double threshold,
                         const std::string& title);

}  // namespace gpudirect::launcher::health
