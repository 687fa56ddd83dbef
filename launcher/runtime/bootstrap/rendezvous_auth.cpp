#include "bootstrap/rendezvous_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace gpudirect::bootstrap {
namespace {

std::string proof(const std::string& key, const char* label, const std::string& server_nonce, const std::string& client_nonce) {
  // The label and both nonces have fixed sizes apart from the label, which ends with its NUL.
  std::string message(label, std::char_traits<char>::length(label) + 1);
  message += server_nonce;
  message += client_nonce;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()), message.size(),
            out, &size) ||
      size != kProofSize)
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  return std::string(reinterpret_cast<const char*>(out), size);
}

}  // namespace

std::string random_nonce() {
  std::string nonce(kNonceSize, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1)
    throw std::runtime_error("no random bytes for the rendezvous handshake (OpenSSL RAND_bytes failed)");
  return nonce;
}

std::string client_proof(const std::string& key, const std::string& server_nonce, const std::string& client_nonce) {
  return proof(key, "gpudirect rendezvous v1 client", server_nonce, client_nonce);
}

std::string server_proof(const std::string& key, const std::string& server_nonce, const std::string& client_nonce) {
  return proof(key, "gpudirect rendezvous v1 server", server_nonce, client_nonce);
}

bool same_proof(const std::string& expected, const std::string& given) {
  return expected.size() == given.size() && CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

}  // namespace gpudirect::bootstrap
