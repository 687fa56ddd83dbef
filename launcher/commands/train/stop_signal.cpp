#include "train/stop_signal.hpp"

#include <signal.h>

#include <atomic>

namespace gpudirect::launcher::train_command {
namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int signal) { g_stop_signal.store(signal); }

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGUSR1, &action, nullptr);
}

bool stop_requested() { return g_stop_signal.load() != 0; }

}  // namespace gpudirect::launcher::train_command
