#include "actors/job/job_record.hpp"

#include <capnp/message.h>
#include <kj/exception.h>

#include "messages/codec.hpp"
#include "messages/flat.hpp"
#include "messages/store.capnp.h"

namespace caldera {

std::string encode_record(const JobModel& m) {
  capnp::MallocMessageBuilder b;
  auto rec = b.initRoot<store::JobRecord>();
  encode(m.job, rec.initJob());
  auto pods = rec.initPods(static_cast<unsigned>(m.pods.size()));
  unsigned i = 0;
  for (const auto& [name, p] : m.pods) encode(p, pods[i++]);
  auto ids = rec.initCommandIds(static_cast<unsigned>(m.command_ids.size()));
  for (unsigned j = 0; j < m.command_ids.size(); ++j) ids.set(j, m.command_ids[j]);
  return to_bytes(b);
}

Result<JobModel> decode_record(std::string_view bytes) {
  try {
    FlatReader reader(bytes);
    auto rec = reader.root<store::JobRecord>();
    JobModel m;
    m.job = decode(rec.getJob());
    for (auto p : rec.getPods()) {
      auto pod = decode(p);
      auto name = pod.name;
      m.pods.emplace(std::move(name), std::move(pod));
    }
    for (auto id : rec.getCommandIds()) m.command_ids.emplace_back(id.cStr());
    return m;
  } catch (const kj::Exception& e) {
    return Failure{std::string("corrupt job record: ") + e.getDescription().cStr()};
  }
}

}  // namespace caldera
