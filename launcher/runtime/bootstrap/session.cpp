#include "bootstrap/session.hpp"

#include "gpudirect/text.hpp"

#include <stdexcept>

namespace gpudirect::bootstrap {

Session open_session(const SessionOptions& options) {
  Session session;
  session.options = options;
  session.context = context_from_environment(current_environment());
  const std::string& rendezvous = options.rendezvous;
  if (!rendezvous.empty()) {
    const auto colon = rendezvous.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw std::invalid_argument("--rendezvous " + rendezvous + ": expected HOST:PORT");
    session.context.rendezvous_host = rendezvous.substr(0, colon);
    session.context.rendezvous_port =
        parse_integer<int>(std::string_view(rendezvous).substr(colon + 1), "--rendezvous " + rendezvous + ": PORT", 1, 65535);
  }
  if (session.context.size > 1) session.store = connect_store(session.context, options.timeout);
  return session;
}

}  // namespace gpudirect::bootstrap
