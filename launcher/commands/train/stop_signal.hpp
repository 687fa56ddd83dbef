// SIGTERM and SIGUSR1 (Slurm's preemption and --signal) ask the run to stop after the current step:
// the handler only records the wish; the ranks agree on it in the step's report, so all stop together.
#pragma once

namespace gpudirect::launcher::train_command {

void install_stop_handlers();
bool stop_requested();  // a stop signal has arrived

}  // namespace gpudirect::launcher::train_command
