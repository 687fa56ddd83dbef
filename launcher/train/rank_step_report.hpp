// The one small exchange per step: every rank's loss, step time, exposed communication and wish to
// stop, packed into doubles so one all-gather carries it over either backend.
#pragma once

#include "train/step_result.hpp"

#include <array>
#include <span>

namespace gpudirect::train {

inline constexpr std::size_t kRankReportFields = 4;
using RankReport = std::array<double, kRankReportFields>;

// This rank's report, from its mean loss and its `result` so far (seconds, exposed communication).
RankReport rank_report(double loss, const StepResult& result, bool stop_requested);

// Fills `result`'s loss (mean over ranks), per-rank times and the shared stop decision from every
// rank's report, `all` holding them in rank order.
void merge_rank_reports(std::span<const double> all, StepResult& result);

}  // namespace gpudirect::train
