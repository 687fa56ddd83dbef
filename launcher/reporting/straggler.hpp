// The one rule that names a straggler among a job's ranks, shared by bench (per row and per run)
// and train (per step): the slowest rank is a straggler when its time is both `ratio` x the median
// of all ranks and `min_gap_seconds` above it (the gap keeps microsecond noise on tiny rows quiet).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::metrics {

struct StragglerRule {
  double ratio;            // slowest > ratio x median
  double min_gap_seconds;  // and slowest - median > this
  std::size_t min_ranks;   // fewer ranks than this: no median to stand out from
};

// Collective rows: every rank waits for the others, so a rank 1.5x the median is far off.
inline constexpr StragglerRule kBenchStragglerRule{1.5, 50e-6, 3};
// Training steps, measured on the time each rank computed (its step minus the time it waited for
// communication): the gradient all-reduce makes every rank's wall step time the same.
inline constexpr StragglerRule kTrainStragglerRule{1.2, 2e-3, 2};

// The slowest rank of a set of per-rank times and where it stands.
struct SlowestRank {
  std::size_t rank = 0;
  double seconds = 0;         // its time
  double median_seconds = 0;  // the median of all ranks' times (the mean of the middle two for an even count)
  bool straggler = false;     // the rule names it
};

// The rule in words for messages and help texts: "over 1.5 x the median and 50 us above it".
std::string describe(const StragglerRule& rule);

// The median of `values` (0 for none).
double median(std::vector<double> values);

// The slowest rank (the lowest rank among equals) and whether `rule` names it a straggler; empty
// for no ranks. A NaN time makes no straggler.
std::optional<SlowestRank> slowest_rank(const std::vector<double>& rank_seconds, const StragglerRule& rule);

}  // namespace gpudirect::launcher::metrics
