#include "reporting/straggler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpudirect::launcher::metrics {

std::string describe(const StragglerRule& rule) {
  char text[96];
  const bool micro = rule.min_gap_seconds < 1e-3;
  std::snprintf(text, sizeof text, "over %g x the median and %g %s above it", rule.ratio, rule.min_gap_seconds * (micro ? 1e6 : 1e3),
                micro ? "us" : "ms");
  return text;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::optional<SlowestRank> slowest_rank(const std::vector<double>& rank_seconds, const StragglerRule& rule) {
  if (rank_seconds.empty()) return std::nullopt;
  SlowestRank out;
  out.rank = static_cast<std::size_t>(std::max_element(rank_seconds.begin(), rank_seconds.end()) - rank_seconds.begin());
  out.seconds = rank_seconds[out.rank];
  out.median_seconds = median(rank_seconds);
  const bool finite = std::all_of(rank_seconds.begin(), rank_seconds.end(), [](double s) { return std::isfinite(s); });
  out.straggler = finite && rank_seconds.size() >= rule.min_ranks && out.median_seconds > 0 &&
                  out.seconds > rule.ratio * out.median_seconds && out.seconds - out.median_seconds > rule.min_gap_seconds;
  return out;
}

}  // namespace gpudirect::launcher::metrics
