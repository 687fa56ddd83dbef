// The CPU model runs its element-wise loops on OpenMP threads and its matrix products on
// OpenBLAS's own threads (Debian's default libopenblas0 is the pthreads build). With GNU OpenMP's
// default wait policy, idle OpenMP workers spin for a while after every parallel region and take
// the cores OpenBLAS's threads need next: at 2 threads a GPT step was 4x slower than with passive
// waiting (measured: 2651 ms vs 654 ms, L6 C384 T256 B4, bench/train_cpu_step). libgomp reads
// OMP_WAIT_POLICY once, when it is loaded, so the only way to set it for our own process is to
// start the process again with it set.
#pragma once

namespace gpudirect::train {

// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, sets OMP_WAIT_POLICY=PASSIVE and execs
// this program again with the same arguments; returns (doing nothing) when one is set already, the
// user's choice, or when the exec fails. Call it first thing in main(), before any thread exists.
void reexec_with_passive_openmp_wait(char** argv);

}  // namespace gpudirect::train
