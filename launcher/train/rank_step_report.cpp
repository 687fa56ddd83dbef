#include "train/rank_step_report.hpp"

#include <stdexcept>

namespace gpudirect::train {

RankReport rank_report(double loss, const StepResult& result, bool stop_requested) {
  return {loss, result.seconds, result.exposed_comm_seconds, stop_requested ? 1.0 : 0.0};
}

void merge_rank_reports(std::span<const double> all, StepResult& result) {
  if (all.empty() || all.size() % kRankReportFields != 0)
    throw std::invalid_argument("rank step reports: " + std::to_string(all.size()) + " values, not a multiple of " +
                                std::to_string(kRankReportFields));
  const std::size_t ranks = all.size() / kRankReportFields;
  result.loss = 0;
  result.rank_seconds.clear();
  result.rank_exposed_seconds.clear();
  result.stop = false;
  for (std::size_t r = 0; r < ranks; ++r) {
    const double* f = all.data() + kRankReportFields * r;
    result.loss += f[0] / static_cast<double>(ranks);
    result.rank_seconds.push_back(f[1]);
    result.rank_exposed_seconds.push_back(f[2]);
    result.stop = result.stop || f[3] != 0;
  }
}

}  // namespace gpudirect::train
