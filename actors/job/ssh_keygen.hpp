// Makes the ssh plugin's key pairs, with OpenSSL's libcrypto: RSA 2048 bits, as Volcano's.
#pragma once

#include "actors/job/core/ssh_key_pair.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/result.hpp"

namespace caldera {

// A new key pair: the private key in PEM as Volcano writes it (PKCS#1, "RSA PRIVATE KEY"), the
// public key as one authorized_keys line ("ssh-rsa AAAA...\n").
Result<SshKeyPair> make_ssh_key_pair();

// The pair a job's ssh plugin gives its pods: the plugin's --ssh-private-key and
// --ssh-public-key when it names them (admission checked both are there), else a new one.
Result<SshKeyPair> ssh_key_pair_for(const JobSpec& spec);

}  // namespace caldera
