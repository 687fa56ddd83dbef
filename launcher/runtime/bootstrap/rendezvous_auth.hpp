// The rendezvous handshake's proofs: both ends show they know the step's secret
// (gpudirect/rendezvous_secret.hpp) without sending it. On every new connection rank 0's server
// sends a fresh random nonce; the client answers with a nonce of its own and
// HMAC-SHA256(secret, "client" label, server nonce, client nonce); only if that is right does the
// server answer HMAC-SHA256(secret, "server" label, server nonce, client nonce), which the client
// checks in turn. A captured answer is worthless on another connection (another server nonce); a
// process squatting on the port cannot prove itself to a rank; the labels keep one side's proof
// from passing as the other's. HMAC and the constant-time comparison are OpenSSL's (libcrypto).
#pragma once

#include <cstddef>
#include <string>

namespace gpudirect::bootstrap {

inline constexpr std::size_t kNonceSize = 32, kProofSize = 32;

// kNonceSize bytes from OpenSSL's CSPRNG; throws std::runtime_error if it has none.
std::string random_nonce();

// What the client sends after the server's nonce, and what the server answers (kProofSize bytes).
std::string client_proof(const std::string& key, const std::string& server_nonce, const std::string& client_nonce);
std::string server_proof(const std::string& key, const std::string& server_nonce, const std::string& client_nonce);

// Equal sizes and bytes, in time that does not depend on where they differ.
bool same_proof(const std::string& expected, const std::string& given);

}  // namespace gpudirect::bootstrap
