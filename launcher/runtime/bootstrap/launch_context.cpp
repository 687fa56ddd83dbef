#include "bootstrap/launch_context.hpp"

#include "gpudirect/rendezvous_secret.hpp"
#include "gpudirect/slurm_step.hpp"
#include "gpudirect/text.hpp"

#include <stdexcept>

extern char** environ;

namespace gpudirect::bootstrap {
namespace {

using Env = std::map<std::string, std::string>;

const std::string* find(const Env& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

int as_int(const Env& env, const std::string& name, int min, int max) {
  const std::string& text = *find(env, name);
  if (const auto value = try_parse_integer<int>(text, min, max)) return *value;
  throw std::invalid_argument(name + "=" + text + " is not an integer in " + std::to_string(min) + ".." + std::to_string(max));
}

int int_or(const Env& env, const std::string& name, int fallback, int min, int max) {
  return find(env, name) ? as_int(env, name, min, max) : fallback;
}

}  // namespace

LaunchContext context_from_environment(const Env& env) {
  LaunchContext c;
  c.hostname = host_name();
  if (find(env, "GPUDIRECT_LAUNCH_RANK")) {  // our own --np spawn
    c.origin = "spawn";
    c.size = as_int(env, "GPUDIRECT_LAUNCH_SIZE", 1, 1 << 20);
    c.rank = as_int(env, "GPUDIRECT_LAUNCH_RANK", 0, c.size - 1);
    c.local_rank = c.rank;
    c.local_size = c.size;
    c.rendezvous_host = "127.0.0.1";
    c.rendezvous_port = as_int(env, "GPUDIRECT_LAUNCH_PORT", 1, 65535);
  } else if (const auto task = slurm_step_task(env)) {
    c.origin = "slurm";
    c.size = task->size;
    c.rank = task->rank;
    c.local_rank = task->local_rank;
    c.local_size = task->local_size;
    c.node = task->node;
    c.rendezvous_host = task->rendezvous_host;
    c.rendezvous_port = task->rendezvous_port;
  } else if (find(env, "RANK") && find(env, "WORLD_SIZE")) {
    c.origin = "torchrun";
    c.size = as_int(env, "WORLD_SIZE", 1, 1 << 20);
    c.rank = as_int(env, "RANK", 0, c.size - 1);
    c.local_rank = int_or(env, "LOCAL_RANK", 0, 0, 1 << 20);
    c.local_size = int_or(env, "LOCAL_WORLD_SIZE", 1, 1, 1 << 20);
    c.node = find(env, "GROUP_RANK") ? as_int(env, "GROUP_RANK", 0, 1 << 20) : int_or(env, "NODE_RANK", 0, 0, 1 << 20);
    if (!find(env, "MASTER_ADDR") || !find(env, "MASTER_PORT"))
      throw std::invalid_argument("RANK and WORLD_SIZE are set but MASTER_ADDR or MASTER_PORT is missing");
    c.rendezvous_host = *find(env, "MASTER_ADDR");
    c.rendezvous_port = as_int(env, "MASTER_PORT", 1, 65535);
  } else {
    c.origin = "single";
  }
  if (c.local_rank >= c.local_size) c.local_size = c.local_rank + 1;
  if (const auto* secret = find(env, kRendezvousSecretVariable)) c.rendezvous_secret = *secret;
  return c;
}

std::map<std::string, std::string> current_environment() {
  Env env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string text(*entry);
    const auto eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return env;
}

}  // namespace gpudirect::bootstrap
