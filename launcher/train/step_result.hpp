// What one optimizer step reports: this rank's view merged with every rank's (loss, times, the wish
// to stop), so every rank decides the same and rank 0 can name the straggler.
#pragma once

#include <vector>

namespace gpudirect::train {

struct StepResult {
  long step = 0;    // 0-based index of the step just done
  double loss = 0;  // mean over ranks (and micro-batches)
  float lr = 0;
  double grad_norm = 0;              // before clipping
  double seconds = 0;                // this rank's step time
  double exposed_comm_seconds = 0;   // this rank's time blocked on communication
  std::vector<double> rank_seconds;  // every rank's step time
  std::vector<double> rank_exposed_seconds;
  bool stop = false;  // some rank asked to stop (a signal): every rank agrees
};

}  // namespace gpudirect::train
