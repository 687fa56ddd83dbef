// `gpudirect-launch --np N ...`: N local ranks of the same command line, like mpirun on one host.
#pragma once

#include <string>
#include <vector>

namespace gpudirect::bootstrap {

// Runs `argv` (without --np) N times with GPUDIRECT_LAUNCH_{RANK,SIZE,PORT} and a fresh
// GPUDIRECT_RENDEZVOUS_SECRET (the same for every rank of this run) set, prefixes every
// output line with "[rank] ", and returns the first failing rank's exit code (0 if all succeed).
// When one rank fails the others get SIGTERM after a grace period, then SIGKILL: nothing hangs.
int spawn_local_ranks(int ranks, const std::vector<std::string>& argv);

// A TCP port on 127.0.0.1 that was free a moment ago (for a local rendezvous).
int free_local_port();

}  // namespace gpudirect::bootstrap
