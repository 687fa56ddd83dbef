// hwloc's plugins, loaded once per process with only the PCI one of them (the others cost time and
// add nothing this model reads: core/src/topology/hwloc.cpp names them), and kept loaded until exit.
// Every topology source calls it before hwloc's first topology; a process that makes topologies of
// its own (the unit tests' runner) calls it first, or hwloc loads every plugin for it. It leaves
// the environment alone in a process with threads (slurmstepd): hwloc.cpp says how.
#pragma once

namespace gpudirect {

void keep_hwloc_plugins_loaded();

}  // namespace gpudirect
