#include "messages/codec/queue_codec.hpp"

#include "messages/codec/codec.hpp"

namespace caldera {

void encode(const Queue& in, api::Queue::Builder out, const QueueStatus* status) {
  out.setUid(in.uid);
  out.setCreatedMs(in.created_ms);
  out.setName(in.spec.name);
  encode_map(in.spec.labels, out.initLabels(static_cast<unsigned>(in.spec.labels.size())));
  encode_map(in.spec.annotations,
             out.initAnnotations(static_cast<unsigned>(in.spec.annotations.size())));
  out.setWeight(in.spec.weight);
  out.setHasCapability(in.spec.capability.has_value());
  if (in.spec.capability)
    encode(*in.spec.capability,
           out.initCapability(static_cast<unsigned>(in.spec.capability->values.size())));
  out.setReclaimable(in.spec.reclaimable);
  out.setState(in.spec.state.empty() ? kQueueOpen : in.spec.state);
  out.setGeneration(in.generation);
  if (!status) return;
  auto s = out.initStatus();
  encode(status->allocated,
         s.initAllocated(static_cast<unsigned>(status->allocated.values.size())));
  encode(status->deserved, s.initDeserved(static_cast<unsigned>(status->deserved.values.size())));
  s.setPending(status->pending);
  s.setInqueue(status->inqueue);
  s.setRunning(status->running);
  s.setState(observed_state(in.spec, *status));
}

void encode(const PriorityClass& in, api::PriorityClass::Builder out) {
  out.setUid(in.uid);
  out.setCreatedMs(in.created_ms);
  out.setName(in.name);
  out.setValue(in.value);
  out.setPreemptionPolicy(in.preemption_policy);
  out.setGlobalDefault(in.global_default);
  out.setDescription(in.description);
}

Queue decode(api::Queue::Reader in) {
  Queue q;
  q.uid = in.getUid();
  q.created_ms = in.getCreatedMs();
  q.spec.name = in.getName();
  q.spec.labels = decode_map(in.getLabels());
  q.spec.annotations = decode_map(in.getAnnotations());
  q.spec.weight = in.getWeight();
  if (in.getHasCapability()) q.spec.capability = decode_resources(in.getCapability());
  q.spec.reclaimable = in.getReclaimable();
  q.spec.state = in.getState().size() ? std::string(in.getState().cStr()) : kQueueOpen;
  q.generation = in.getGeneration() > 0 ? in.getGeneration() : 1;
  return q;
}

QueueStatus decode_status(api::Queue::Reader in) {
  QueueStatus s;
  s.name = in.getName();
  if (!in.hasStatus()) return s;
  auto st = in.getStatus();
  s.allocated = decode_resources(st.getAllocated());
  s.deserved = decode_resources(st.getDeserved());
  s.pending = st.getPending();
  s.inqueue = st.getInqueue();
  s.running = st.getRunning();
  s.state = st.getState();
  return s;
}

PriorityClass decode(api::PriorityClass::Reader in) {
  PriorityClass c;
  c.uid = in.getUid();
  c.created_ms = in.getCreatedMs();
  c.name = in.getName();
  c.value = in.getValue();
  c.preemption_policy = in.getPreemptionPolicy();
  c.global_default = in.getGlobalDefault();
  c.description = in.getDescription();
  return c;
}

}  // namespace caldera
