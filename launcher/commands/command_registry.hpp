// Every subcommand of gpudirect-launch registers itself here, the same way: one folder under
// commands/ (bench/, check_node/, doctor/, exec/, health/, rendezvous_check/, supervise/, train/) with a register_X
// function, and one line in command_registry.cpp. Code several commands use sits in commands/
// itself; a command never includes another's files (tests/floors). main.cpp owns the CLI11 app and
// the options shared by every command, and passes them down as plain structs; the floors below
// never see CLI11.
#pragma once

#include "bootstrap/session.hpp"

#include <CLI/CLI.hpp>

#include <span>

namespace gpudirect::launcher {

// What main.cpp owns and hands to every command. Read it in the command's callback: the values
// are filled while the command line is parsed.
struct CommandContext {
  bootstrap::SessionOptions session;  // --rendezvous, --timeout
  int exit_code = 0;                  // the command's callback stores the process exit status here
};

using RegisterCommand = void (*)(CLI::App& app, CommandContext& context);

struct CommandEntry {
  const char* name;  // as typed on the command line
  RegisterCommand add;
};

// In --help order.
std::span<const CommandEntry> all_commands();

void register_bench(CLI::App& app, CommandContext& context);
void register_doctor(CLI::App& app, CommandContext& context);
void register_rendezvous_check(CLI::App& app, CommandContext& context);
void register_train(CLI::App& app, CommandContext& context);
void register_exec(CLI::App& app, CommandContext& context);
void register_health(CLI::App& app, CommandContext& context);
void register_check_node(CLI::App& app, CommandContext& context);
void register_supervise(CLI::App& app, CommandContext& context);

}  // namespace gpudirect::launcher
