#include "messages/codec/pod_files.hpp"

#include <capnp/message.h>

#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"

namespace caldera {

std::string pod_files_bytes(const std::string& uid,
                            const std::map<std::string, std::string>& files) {
  SmallMessageBuilder b;
  auto f = b.initRoot<cluster::PodFiles>();
  f.setUid(uid);
  encode_map(files, f.initFiles(static_cast<unsigned>(files.size())));
  return to_bytes(b);
}

}  // namespace caldera
