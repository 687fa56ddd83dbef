#include "bootstrap/session.hpp"

#include <stdexcept>

namespace gpudirect::bootstrap {

GlobalOptions& global_options() {
  static GlobalOptions options;
  return options;
}

Session open_session() {
  Session session;
  session.context = context_from_environment(current_environment());
  const std::string& rendezvous = global_options().rendezvous;
  if (!rendezvous.empty()) {
    const auto colon = rendezvous.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw std::invalid_argument("--rendezvous " + rendezvous + ": expected HOST:PORT");
    session.context.rendezvous_host = rendezvous.substr(0, colon);
    try {
      session.context.rendezvous_port = std::stoi(rendezvous.substr(colon + 1));
    } catch (const std::exception&) {
      throw std::invalid_argument("--rendezvous " + rendezvous + ": PORT is not a number");
    }
    if (session.context.rendezvous_port < 1 || session.context.rendezvous_port > 65535)
      throw std::invalid_argument("--rendezvous " + rendezvous + ": PORT must be 1..65535");
  }
  if (session.context.size > 1) session.store = connect_store(session.context, global_options().timeout);
  return session;
}

}  // namespace gpudirect::bootstrap
