// Waiting, boundedly, for a service that must be up before a task starts (TCPXO's RxDM): either a
// file it writes when ready, or a unix socket that accepts connections.
#pragma once

#include <string>

namespace gpudirect {

struct ReadinessResult {
  bool ready = false;
  std::string detail;  // what was last seen, for the error message
};

// Polls every 200 ms until `path` is ready or `timeout_s` passes (0: a single check).
ReadinessResult wait_until_ready(const std::string& path, int timeout_s);

}  // namespace gpudirect
