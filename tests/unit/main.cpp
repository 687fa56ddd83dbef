#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "gpudirect/hwloc_plugins.hpp"

#include <hwloc.h>

namespace {
hwloc_topology_t keep_plugins_loaded = nullptr;  // a global, so LeakSanitizer sees it as reachable
}

int main(int argc, char* argv[]) {
  // hwloc unloads its plugins (libhwloc-plugins: the PCI component) when the last topology is
  // destroyed, and the PCI component's global allocations then become unreachable: LeakSanitizer
  // reports them from an "<unknown module>". core keeps one topology until its static destructors
  // run; this one, never destroyed, keeps the plugins loaded past them, so the leak report shows only
  // our own leaks. core loads the plugins first, so that this topology gets the plugins core chose
  // (before, this topology loaded all of them: with hwloc_gl's X11 libraries, LeakSanitizer's tracer
  // crashed at exit in the live-topology case). The runner has threads from the start (OpenBLAS), so
  // core does not leave the unneeded plugins out by itself here: ctest names them in the runner's
  // environment (HWLOC_PLUGINS_BLACKLIST, tests/CMakeLists.txt).
  gpudirect::keep_hwloc_plugins_loaded();
  if (hwloc_topology_init(&keep_plugins_loaded) != 0) keep_plugins_loaded = nullptr;
  return Catch::Session().run(argc, argv);  // keep_plugins_loaded is never destroyed: see above
}
