// The ssh plugin's key pair of one job, as Volcano keeps it in the job's Secret "<job>-ssh":
// made once with the job, stored with its spec, and given to every pod of the job.
#pragma once

#include <string>

namespace caldera {

struct SshKeyPair {
  std::string private_key;  // PEM
  std::string public_key;   // one authorized_keys line: "ssh-rsa AAAA...\n"
  bool operator==(const SshKeyPair&) const = default;
};

}  // namespace caldera
