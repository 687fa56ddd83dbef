#include "command_registry.hpp"

#include <array>

namespace gpudirect::launcher {

std::span<const CommandEntry> all_commands() {
  // A new command: its folder, its register_X in command_registry.hpp, and one line here.
  static constexpr std::array kCommands{
      CommandEntry{"bench", register_bench},
      CommandEntry{"doctor", register_doctor},
      CommandEntry{"rendezvous-check", register_rendezvous_check},
      CommandEntry{"train", register_train},
      CommandEntry{"supervise", register_supervise},
      CommandEntry{"exec", register_exec},
      CommandEntry{"health", register_health},
      CommandEntry{"check-node", register_check_node},
  };
  return kCommands;
}

}  // namespace gpudirect::launcher
