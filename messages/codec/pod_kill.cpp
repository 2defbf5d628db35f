#include "messages/codec/pod_kill.hpp"

#include <capnp/message.h>

#include "messages/cluster.capnp.h"
#include "messages/codec/flat.hpp"

namespace caldera {

std::string pod_kill_bytes(const std::string& uid, int64_t grace_ms, const std::string& reason,
                           const std::string& evict_reason) {
  SmallMessageBuilder b;
  auto k = b.initRoot<cluster::PodKill>();
  k.setUid(uid);
  k.setGraceMs(grace_ms);
  k.setReason(reason);
  k.setEvictReason(evict_reason);
  return to_bytes(b);
}

}  // namespace caldera
