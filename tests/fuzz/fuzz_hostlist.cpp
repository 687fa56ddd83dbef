// Slurm's compressed host lists (SLURM_JOB_NODELIST, health --nodes).
#include "fuzz_input.hpp"

#include "gpudirect/hostlist.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)gpudirect::expand_hostlist(gpudirect::fuzz::as_text(data, size));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
