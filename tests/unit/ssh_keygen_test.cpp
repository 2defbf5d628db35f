// The ssh plugin's key pairs: a private key OpenSSL reads back, whose public half is the
// authorized_keys line beside it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "actors/job/ssh_keygen.hpp"

namespace caldera {
namespace {

// Reads SSH's wire strings (4-byte big-endian length, then the bytes) off the front of `in`.
std::string take(std::string& in) {
  if (in.size() < 4) return {};
  size_t n = 0;
  for (int i = 0; i < 4; ++i) n = n << 8 | static_cast<unsigned char>(in[static_cast<size_t>(i)]);
  auto out = in.substr(4, n);
  in.erase(0, 4 + n);
  return out;
}

std::string hex_of(const BIGNUM* bn) {
  char* text = BN_bn2hex(bn);
  std::string out = text;
  OPENSSL_free(text);
  return out;
}

std::string hex_of_mpint(const std::string& bytes) {
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()),
                static_cast<int>(bytes.size()), nullptr),
      &BN_free);
  return hex_of(bn.get());
}

TEST(SshKeygen, ThePrivateKeyIsPkcs1PemAndThePublicLineIsItsOwnHalf) {
  auto pair = make_ssh_key_pair();
  ASSERT_TRUE(pair) << pair.error();
  EXPECT_TRUE(pair->private_key.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
  ASSERT_TRUE(pair->public_key.starts_with("ssh-rsa "));
  ASSERT_TRUE(pair->public_key.ends_with("\n"));

  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pair->private_key.data(), static_cast<int>(pair->private_key.size())),
      &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
  ASSERT_TRUE(key);
  EXPECT_EQ(EVP_PKEY_get_bits(key.get()), 2048);
  BIGNUM* n = nullptr;
  BIGNUM* e = nullptr;
  ASSERT_EQ(EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_N, &n), 1);
  ASSERT_EQ(EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_E, &e), 1);

  const std::string b64 = pair->public_key.substr(8, pair->public_key.size() - 9);
  std::string blob(b64.size(), '\0');
  int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(blob.data()),
                            reinterpret_cast<const unsigned char*>(b64.data()),
                            static_cast<int>(b64.size()));
  ASSERT_GT(len, 0);
  blob.resize(static_cast<size_t>(len) - std::count(b64.end() - 2, b64.end(), '='));
  EXPECT_EQ(take(blob), "ssh-rsa");
  auto e_bytes = take(blob);
  auto n_bytes = take(blob);
  EXPECT_TRUE(blob.empty()) << "nothing follows the modulus";
  // mpints are positive: a leading zero byte where the top bit is set, none otherwise.
  ASSERT_FALSE(n_bytes.empty());
  EXPECT_EQ(n_bytes[0], '\0') << "a 2048-bit modulus has its top bit set";
  EXPECT_EQ(hex_of_mpint(e_bytes), hex_of(e));
  EXPECT_EQ(hex_of_mpint(n_bytes), hex_of(n));
  BN_free(n);
  BN_free(e);

  auto other = make_ssh_key_pair();
  ASSERT_TRUE(other);
  EXPECT_NE(other->public_key, pair->public_key) << "every job its own pair";
}

TEST(SshKeygen, AJobThatNamesItsOwnPairKeepsIt) {
  JobSpec spec;
  spec.plugins = {
      {"svc", {}},
      {"ssh",
       {"--ssh-private-key=-----BEGIN KEY-----\nabc\n", "--ssh-public-key=ssh-rsa AAAA me\n"}}};
  auto pair = ssh_key_pair_for(spec);
  ASSERT_TRUE(pair) << pair.error();
  EXPECT_EQ(pair->private_key, "-----BEGIN KEY-----\nabc\n");
  EXPECT_EQ(pair->public_key, "ssh-rsa AAAA me\n");
  spec.plugins.pop_back();
  spec.plugins.push_back({"ssh", {"--ssh-port=2222"}});
  auto made = ssh_key_pair_for(spec);
  ASSERT_TRUE(made) << made.error();
  EXPECT_TRUE(made->public_key.starts_with("ssh-rsa "));
}

}  // namespace
}  // namespace caldera
