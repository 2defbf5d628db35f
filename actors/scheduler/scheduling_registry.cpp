#include "actors/scheduler/scheduling_registry.hpp"

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "actors/api/responses.hpp"
#include "messages/admission/admission.hpp"
#include "messages/codec/flat.hpp"
#include "messages/codec/queue_codec.hpp"

namespace caldera {

std::vector<Queue> SchedulingRegistry::all_queues() const {
  std::vector<Queue> out;
  if (!queues.count(kDefaultQueue)) out.push_back(Queue{"", 0, QueueSpec{kDefaultQueue}});
  for (const auto& [name, q] : queues) out.push_back(q);
  return out;
}

std::string SchedulingRegistry::default_class() const {
  for (const auto& [name, c] : classes)
    if (c.global_default) return name;
  return "";
}

std::vector<PriorityClass> SchedulingRegistry::all_classes() const {
  std::vector<PriorityClass> out;
  for (const auto& [name, c] : classes) out.push_back(c);
  return out;
}

std::string queue_key(const std::string& name) {
  return "queue/" + name;
}

std::string priority_class_key(const std::string& name) {
  return "priorityclass/" + name;
}

std::string queue_record(const Queue& q) {
  SmallMessageBuilder b;
  encode(q, b.initRoot<api::Queue>());
  return to_bytes(b);
}

std::string priority_class_record(const PriorityClass& c) {
  SmallMessageBuilder b;
  encode(c, b.initRoot<api::PriorityClass>());
  return to_bytes(b);
}

void recover(SchedulingRegistry& registry, Store& store) {
  store.scan(Family::Scheduling, [&](std::string_view key, std::string_view value) {
    try {
      FlatReader reader(value);
      if (key.starts_with("queue/")) {
        auto q = decode(reader.root<api::Queue>());
        registry.queues[q.spec.name] = std::move(q);
      } else if (key.starts_with("priorityclass/")) {
        auto c = decode(reader.root<api::PriorityClass>());
        registry.classes[c.name] = std::move(c);
      } else {
        spdlog::error("store: unknown scheduling record {}, skipped", key);
      }
    } catch (const kj::Exception& e) {
      spdlog::error("store: corrupt scheduling record {}, skipped: {}", key,
                    e.getDescription().cStr());
    }
  });
}

}  // namespace caldera
