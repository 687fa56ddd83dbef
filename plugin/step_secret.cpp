// slurm_spank_init_post_opt in srun (local context, as the user, once per srun, whatever
// --gpu-direct says): give the step its rendezvous secret (gpudirect/rendezvous_secret.hpp). srun
// passes its own environment to every task of the step, so setenv here reaches all of them
// (spank_setenv is for slurmstepd only), and each srun makes a new one. A secret the user already
// exported is kept: ranks started by several sruns, or by srun and something else, can share it.
#include "plugin_state.hpp"

#include "gpudirect/rendezvous_secret.hpp"

#include <cstdlib>
#include <stdexcept>

namespace gpudirect::plugin {

int on_srun_post_opt() {
  const char* given = std::getenv(kRendezvousSecretVariable);
  if (given && *given) return 0;
  try {
    if (::setenv(kRendezvousSecretVariable, new_rendezvous_secret().c_str(), 1) != 0) throw std::runtime_error("setenv failed");
  } catch (const std::exception& e) {
    // Only gpudirect-launch needs it, and it refuses clearly without it: no reason to stop the step.
    log_error(std::string("no rendezvous secret for this step (") + e.what() +
              "): gpudirect-launch ranks of it will refuse to start; export " + kRendezvousSecretVariable + " before srun");
  }
  return 0;
}

}  // namespace gpudirect::plugin
