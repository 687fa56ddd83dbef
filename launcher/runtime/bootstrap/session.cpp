#include "bootstrap/session.hpp"

#include "gpudirect/text.hpp"

#include <stdexcept>

namespace gpudirect::bootstrap {

HostPort parse_host_port(const std::string& text, const std::string& field) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw std::invalid_argument(field + " " + text + ": expected HOST:PORT");
  return {text.substr(0, colon), parse_integer<int>(std::string_view(text).substr(colon + 1), field + " " + text + ": PORT", 1, 65535)};
}

Session open_session(const SessionOptions& options) {
  Session session;
  session.options = options;
  session.context = context_from_environment(current_environment());
  if (!options.rendezvous.empty()) {
    const HostPort rendezvous = parse_host_port(options.rendezvous, "--rendezvous");
    session.context.rendezvous_host = rendezvous.host;
    session.context.rendezvous_port = rendezvous.port;
  }
  if (session.context.size > 1) session.store = connect_store(session.context, options.timeout);
  return session;
}

}  // namespace gpudirect::bootstrap
