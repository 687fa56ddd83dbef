#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <hwloc.h>

namespace {
hwloc_topology_t keep_plugins_loaded = nullptr;  // a global, so LeakSanitizer sees it as reachable
}

int main(int argc, char* argv[]) {
  // hwloc unloads its plugins (libhwloc-plugins: the PCI component) when the last topology is
  // destroyed, and the PCI component's global allocations then become unreachable: LeakSanitizer
  // reports them from an "<unknown module>". Keeping one topology for the whole test process keeps
  // the plugins loaded, so the leak report shows only our own leaks.
  if (hwloc_topology_init(&keep_plugins_loaded) != 0) keep_plugins_loaded = nullptr;
  return Catch::Session().run(argc, argv);  // keep_plugins_loaded is never destroyed: see above
}
