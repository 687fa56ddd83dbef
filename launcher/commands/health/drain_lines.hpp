// What an admin runs for a bad node: the scontrol line that drains it with a reason naming the
// measurement and the peer, and the test for "drained by us" that --resume relies on.
#pragma once

#include "health/sweep_run.hpp"
#include "node_drain.hpp"
#include "number_text.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gpudirect::launcher::health {

// Every reason we set starts with this; --resume only undrains nodes whose reason does.
inline constexpr std::string_view kReasonPrefix = "gpudirect health:";

// "gpudirect health: all_gather 0.41 GB/s with node2, threshold 1.2", or "... all_gather failed
// with node2 (exit 3)" / "... timed out after 60 s with node2". No double quotes (they would end
// the quoted reason).
std::string drain_reason(const SweepRun& run, const std::string& node, double threshold);

// The scontrol lines themselves are the commands' shared ones (node_drain.hpp).
using launcher::drain_command;
using launcher::drain_line;
using launcher::resume_command;

bool drained_by_us(std::string_view reason);

}  // namespace gpudirect::launcher::health
