#include "gpudirect/rendezvous_secret.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gpudirect {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string new_rendezvous_secret() {
  unsigned char bytes[32];
  std::size_t done = 0;
  while (done < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + done, sizeof bytes - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(std::string("cannot read random bytes for the rendezvous secret (getrandom: ") + std::strerror(errno) + ")");
    done += static_cast<std::size_t>(n);
  }
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char b : bytes) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

std::string decode_rendezvous_secret(std::string_view hex) {
  const std::string name = kRendezvousSecretVariable;
  if (hex.size() < kRendezvousSecretMinHexDigits || hex.size() > kRendezvousSecretMaxHexDigits || hex.size() % 2 != 0)
    throw std::invalid_argument(name + " has " + std::to_string(hex.size()) + " characters: expected an even number of hex digits, " +
                                std::to_string(kRendezvousSecretMinHexDigits) + " (128 bits) to " +
                                std::to_string(kRendezvousSecretMaxHexDigits));
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = hex_value(hex[i]), low = hex_value(hex[i + 1]);
    if (high < 0 || low < 0)
      throw std::invalid_argument(name + " holds a character that is not a hex digit at position " + std::to_string(high < 0 ? i : i + 1));
    bytes += static_cast<char>(high * 16 + low);
  }
  return bytes;
}

}  // namespace gpudirect
