// The GPUDirect mode a user asks for with --gpu-direct[=MODE][,verbose][,torch].
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpudirect {

enum class Mode { auto_detect, tcpxo, tcpx, gib, rdma, off };

std::string_view to_string(Mode mode);  // "auto", "tcpxo", ...
// Throws std::invalid_argument with `valid_modes_message()` for an unknown name.
Mode parse_mode(std::string_view name);

struct ModeRequest {
  std::optional<Mode> mode;  // empty: the plugstack default
  bool verbose = false;
  bool torch = false;  // also give the task torch.distributed's variables (torch_env.hpp)
};

// "" -> default; "tcpxo"; "tcpxo,verbose"; "verbose"; "tcpxo,torch"; "torch,verbose" (any order). Throws std::invalid_argument whose
// message names the bad value and lists the valid ones.
ModeRequest parse_mode_request(std::string_view value);

std::string valid_modes_message();

}  // namespace gpudirect
