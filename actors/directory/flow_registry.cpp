#include "actors/directory/flow_registry.hpp"

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "actors/api/responses.hpp"
#include "messages/codec.hpp"
#include "messages/flat.hpp"
#include "messages/store.capnp.h"

namespace caldera {
namespace {

template <class T>
void recover_kind(Registry<T>& reg, Store& store) {
  size_t count = 0;
  store.scan(FlowKind<T>::family, [&](std::string_view key, std::string_view value) {
    auto item = FlowKind<T>::parse(value);
    if (!item) {
      spdlog::error("{}={} cannot be recovered: {}", FlowKind<T>::log, std::string(key),
                    item.error());
      return;
    }
    reg.durable[std::string(key)] = std::move(*item);
    ++count;
  });
  if (count) spdlog::info("coordinator recovered {}s={}", FlowKind<T>::log, count);
}

}  // namespace

std::string FlowKind<JobTemplate>::record(const JobTemplate& t) {
  SmallMessageBuilder b;
  encode(t, b.initRoot<store::JobTemplateRecord>().initTemplate());
  return to_bytes(b);
}

Result<JobTemplate> FlowKind<JobTemplate>::parse(std::string_view record) {
  try {
    FlatReader reader(record);
    return decode(reader.root<store::JobTemplateRecord>().getTemplate());
  } catch (const kj::Exception& e) {
    return Failure{std::string("corrupt jobtemplate record: ") + e.getDescription().cStr()};
  }
}

void FlowKind<JobTemplate>::set_one(api::Response::Builder r, const JobTemplate& t) {
  encode(t, r.initJobTemplate());
}

void FlowKind<JobTemplate>::set_list(api::Response::Builder r,
                                     const std::vector<const JobTemplate*>& items) {
  auto list = r.initJobTemplates(static_cast<unsigned>(items.size()));
  for (unsigned i = 0; i < items.size(); ++i) encode(*items[i], list[i]);
}

std::string FlowKind<JobFlow>::record(const JobFlow& f) {
  SmallMessageBuilder b;
  auto rec = b.initRoot<store::JobFlowRecord>();
  encode(f, rec.initFlow());
  return to_bytes(b);
}

Result<JobFlow> FlowKind<JobFlow>::parse(std::string_view record) {
  try {
    FlatReader reader(record);
    return decode(reader.root<store::JobFlowRecord>().getFlow());
  } catch (const kj::Exception& e) {
    return Failure{std::string("corrupt jobflow record: ") + e.getDescription().cStr()};
  }
}

void FlowKind<JobFlow>::set_one(api::Response::Builder r, const JobFlow& f) {
  encode(f, r.initJobFlow());
}

void FlowKind<JobFlow>::set_list(api::Response::Builder r,
                                 const std::vector<const JobFlow*>& items) {
  auto list = r.initJobFlows(static_cast<unsigned>(items.size()));
  for (unsigned i = 0; i < items.size(); ++i) encode(*items[i], list[i]);
}

void recover(FlowRegistry& registry, Store& store) {
  recover_kind(registry.templates, store);
  recover_kind(registry.flows, store);
}

std::string already_exists(const char* resource, const std::string& ns, const std::string& name) {
  return std::string(resource) + " \"" + name + "\" already exists in namespace " + ns;
}

std::string ref_key(api::ObjectRef::Reader ref) {
  std::string ns = ref.getNamespace();
  return (ns.empty() ? std::string("default") : ns) + "/" + std::string(ref.getName());
}

template <class T>
std::string not_found_response(uint64_t id, api::ObjectRef::Reader ref) {
  std::string ns = ref.getNamespace();
  return error_response(id, api::Error::Code::NOT_FOUND,
                        std::string(FlowKind<T>::resource) + " \"" + std::string(ref.getName()) +
                            "\" not found in namespace " + (ns.empty() ? "default" : ns),
                        "name");
}

template <class T>
std::string get_response(uint64_t id, const Registry<T>& reg, api::ObjectRef::Reader ref) {
  const T* item = reg.find(ref_key(ref));
  if (!item) return not_found_response<T>(id, ref);
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  FlowKind<T>::set_one(r, *item);
  return to_bytes(b);
}

template <class T>
std::string list_response(uint64_t id, const Registry<T>& reg, api::ListFilter::Reader filter) {
  const std::string ns = filter.getNamespace();
  std::vector<const T*> items;
  for (const auto& [key, item] : reg.durable)
    if (ns.empty() || key.compare(0, ns.size() + 1, ns + "/") == 0) items.push_back(&item);
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  FlowKind<T>::set_list(r, items);
  return to_bytes(b);
}

template std::string get_response(uint64_t, const Registry<JobTemplate>&, api::ObjectRef::Reader);
template std::string get_response(uint64_t, const Registry<JobFlow>&, api::ObjectRef::Reader);
template std::string list_response(uint64_t, const Registry<JobTemplate>&, api::ListFilter::Reader);
template std::string list_response(uint64_t, const Registry<JobFlow>&, api::ListFilter::Reader);
template std::string not_found_response<JobTemplate>(uint64_t, api::ObjectRef::Reader);
template std::string not_found_response<JobFlow>(uint64_t, api::ObjectRef::Reader);

}  // namespace caldera
