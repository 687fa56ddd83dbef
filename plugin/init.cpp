// slurm_spank_init: register --gpu-direct and read the plugstack arguments, in every context
// (srun, sbatch/salloc, slurmstepd, slurmd), so an admin's typo shows up at once.
#include "plugin_state.hpp"

#include <stdexcept>
#include <vector>

namespace gpudirect::plugin {
namespace {

int option_callback(int val, const char* optarg, int remote) noexcept {
  try {
    return on_option(val, optarg, remote);
  } catch (const std::exception& e) {
    log_error(e.what());
  } catch (...) {
    log_error("unexpected internal error in the option callback");
  }
  return -1;
}

char option_name[] = "gpu-direct";
char option_arginfo[] = "MODE";
char option_usage[] =
    "Set each task's GPU/NIC/CPU affinity and GPUDirect network environment. MODE: auto, tcpxo, tcpx, "
    "gib, rdma or off, optionally with ',verbose' to print each task's binding and ',torch' to also set RANK, "
    "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and GLOO_SOCKET_IFNAME for "
    "torch.distributed (never overriding yours). Without MODE: the site default.";

struct spank_option gpu_direct_option = {option_name, option_arginfo, option_usage, 2, 0, option_callback};

}  // namespace

int on_init(spank_t spank, int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  try {
    state().config = parse_plugin_config(args);
  } catch (const std::invalid_argument& e) {
    log_error(std::string(e.what()) + " (fix the spank_gpudirect.so line in plugstack.conf)");
    return -1;
  }
  const spank_context_t context = spank_context();
  if (context == S_CTX_LOCAL || context == S_CTX_REMOTE || context == S_CTX_ALLOCATOR) {
    if (spank_option_register(spank, &gpu_direct_option) != ESPANK_SUCCESS) {
      log_error("could not register --gpu-direct");
      return -1;
    }
  }
  return 0;
}

int on_option(int, const char* optarg, int) {
  // Slurm may run this twice in slurmstepd: parsing again gives the same state.
  try {
    state().request = parse_mode_request(optarg ? optarg : "");
  } catch (const std::invalid_argument& e) {
    log_error(e.what());
    return -1;
  }
  state().option_given = true;
  return 0;
}

Mode asked_mode() { return requested_mode(state().request, state().config); }

}  // namespace gpudirect::plugin
