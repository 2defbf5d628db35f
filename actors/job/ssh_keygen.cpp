#include "actors/job/ssh_keygen.hpp"

#include <memory>
#include <string>
#include <vector>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

namespace caldera {
namespace {

std::string openssl_error(const char* what) {
  char text[256] = "unknown error";
  if (auto code = ERR_get_error()) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return std::string(what) + ": " + text;
}

// SSH's wire form (RFC 4251): a string or mpint is its 4-byte big-endian length, then its bytes.
void put_string(std::string& out, const std::string& bytes) {
  const auto n = static_cast<uint32_t>(bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  out += bytes;
}

// An mpint: big-endian, with a zero byte in front when the top bit is set (the number is positive).
std::string mpint(const BIGNUM* bn) {
  std::string bytes(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
  if (!bytes.empty() && (static_cast<unsigned char>(bytes[0]) & 0x80)) bytes.insert(0, 1, '\0');
  return bytes;
}

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

Result<SshKeyPair> make_ssh_key_pair() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}), &EVP_PKEY_free);
  if (!key) return Failure{openssl_error("cannot make an RSA key")};
  std::unique_ptr<BIO, decltype(&BIO_free)> pem(BIO_new(BIO_s_mem()), &BIO_free);
  if (!pem || PEM_write_bio_PrivateKey_traditional(pem.get(), key.get(), nullptr, nullptr, 0,
                                                   nullptr, nullptr) != 1)
    return Failure{openssl_error("cannot write the private key")};
  char* data = nullptr;
  long size = BIO_get_mem_data(pem.get(), &data);
  SshKeyPair pair;
  pair.private_key.assign(data, static_cast<size_t>(size));
  BIGNUM* n = nullptr;
  BIGNUM* e = nullptr;
  if (EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_N, &n) != 1 ||
      EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_E, &e) != 1) {
    BN_free(n);
    return Failure{openssl_error("cannot read the public key")};
  }
  std::string blob;
  put_string(blob, "ssh-rsa");
  put_string(blob, mpint(e));
  put_string(blob, mpint(n));
  BN_free(n);
  BN_free(e);
  pair.public_key = "ssh-rsa " + base64(blob) + "\n";
  return pair;
}

Result<SshKeyPair> ssh_key_pair_for(const JobSpec& spec) {
  for (const auto& p : spec.plugins) {
    if (p.name != "ssh") continue;
    auto private_key = plugin_arg(p, "ssh-private-key", "");
    if (!private_key.empty()) return SshKeyPair{private_key, plugin_arg(p, "ssh-public-key", "")};
  }
  return make_ssh_key_pair();
}

}  // namespace caldera
