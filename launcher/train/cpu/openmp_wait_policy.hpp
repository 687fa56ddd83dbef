// The CPU model's OpenMP workers wait passively. Why: its matrix products run on OpenBLAS's own
// threads, and with GNU OpenMP's default wait policy idle workers spin after every parallel region
// on the cores OpenBLAS needs next (perf/train_cpu_step shows the cost). libgomp reads
// OMP_WAIT_POLICY once, when it is loaded, so the process starts again with it set.
#pragma once

namespace gpudirect::train {

// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, sets OMP_WAIT_POLICY=PASSIVE and execs
// this program again with the same arguments; returns (doing nothing) when one is set already, the
// user's choice, or when the exec fails. Call it first thing in main(), before any thread exists.
void reexec_with_passive_openmp_wait(char** argv);

}  // namespace gpudirect::train
