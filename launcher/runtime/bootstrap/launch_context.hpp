// Who this process is in the job: rank, size, local rank, and where the rendezvous lives.
// Filled from Slurm (SLURM_PROCID ...), torchrun-style variables (RANK, MASTER_ADDR ...), or the
// launcher's own --np spawn, in that order of preference unless flags say otherwise.
#pragma once

#include <map>
#include <string>

namespace gpudirect::bootstrap {

struct LaunchContext {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int node = 0;
  std::string hostname;
  std::string rendezvous_host = "127.0.0.1";  // rank 0's host: first host of SLURM_STEP_NODELIST
  int rendezvous_port = 0;
  std::string origin;  // "slurm", "torchrun", "spawn" or "single" for messages
  // GPUDIRECT_RENDEZVOUS_SECRET as given (hex; "" when unset): every connection to the rendezvous
  // proves it (store.hpp). Never printed.
  std::string rendezvous_secret;
};

// Reads the environment given (a map so tests need not touch the real environment).
// Throws std::invalid_argument naming the variable when a value is malformed.
LaunchContext context_from_environment(const std::map<std::string, std::string>& env);

std::map<std::string, std::string> current_environment();

}  // namespace gpudirect::bootstrap
