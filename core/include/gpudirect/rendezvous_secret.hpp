// The per-step secret that authenticates the ranks at their rendezvous (launcher/runtime/bootstrap/
// store.hpp). Every task of a step gets the same value in its environment, from the plugin (srun's
// local context, fresh per srun) or from `gpudirect-launch --np` (fresh per run); another user
// cannot read a process's environment (/proc/PID/environ is owner-only), so knowing it proves a
// peer is one of the job's own processes. It never goes on a command line or into a file.
#pragma once

#include <string>
#include <string_view>

namespace gpudirect {

inline constexpr char kRendezvousSecretVariable[] = "GPUDIRECT_RENDEZVOUS_SECRET";
// 128 bits at least (32 hex digits); new secrets have 256.
inline constexpr std::size_t kRendezvousSecretMinHexDigits = 32, kRendezvousSecretMaxHexDigits = 1024;

// 32 fresh bytes from getrandom(2), as 64 lowercase hex digits. Throws std::runtime_error naming
// the errno if the kernel cannot give them.
std::string new_rendezvous_secret();

// The secret's bytes from its hex text: hex digits only, an even number of them, 32 to 1024.
// Throws std::invalid_argument naming the variable and what is wrong (never the value).
std::string decode_rendezvous_secret(std::string_view hex);

}  // namespace gpudirect
