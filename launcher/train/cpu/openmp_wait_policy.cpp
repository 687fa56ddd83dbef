#include "train/cpu/openmp_wait_policy.hpp"

#include <unistd.h>

#include <cstdlib>

namespace gpudirect::train {

void reexec_with_passive_openmp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", 0) != 0) return;
  ::execv("/proc/self/exe", argv);
  // exec failed (no /proc?): run on with the default policy; only speed is at stake. The variable
  // stays set, so a second call does not try again.
}

}  // namespace gpudirect::train
