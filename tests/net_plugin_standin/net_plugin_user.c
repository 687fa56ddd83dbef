/* A program that needs libnccl-net.so to start (DT_NEEDED, no RPATH): it runs only where the
 * dynamic loader finds the stand-in plugin, e.g. through LD_LIBRARY_PATH inside a container
 * (tests/integration/test_container_hook.sh). Prints the plugin's ncclNetPlugin_v8 contents. */
#include <stdio.h>

extern const char ncclNetPlugin_v8[64];

int main(void) {
  printf("%s\n", ncclNetPlugin_v8);
  return 0;
}
