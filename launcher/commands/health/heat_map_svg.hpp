// The pair matrix as an SVG an admin opens in a browser: one cell per measured pair, coloured by
// busbw against the threshold (red under it, yellow to green above), failed runs dark with an x,
// node labels on both axes (bad nodes in red), and a colour scale.
#pragma once

#include "health/sweep_run.hpp"
#include "health/verdicts.hpp"

#include <string>
#include <vector>

namespace gpudirect::launcher::health {

std::string heat_map_svg(const std::vector<NodeVerdict>& nodes, const std::vector<SweepRun>& runs, double threshold,
                         const std::string& title);

}  // namespace gpudirect::launcher::health
