#include "actors/jobflow/flow_records.hpp"

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "actors/api/responses.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/store.capnp.h"

namespace caldera {

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
std::optional<T> load_stored(Store& store, const std::string& key) {
  auto row = store.get(FlowKind<T>::family, key);
  if (!row) return std::nullopt;
  auto item = FlowKind<T>::parse(*row);
  if (!item) {
    spdlog::error("{}={} cannot be read: {}", FlowKind<T>::log, key, item.error());
    return std::nullopt;
  }
  return std::move(*item);
}

template <class T>
std::vector<T> load_all_stored(Store& store, const std::string& ns) {
  std::vector<T> out;
  const std::string prefix = ns.empty() ? std::string() : ns + "/";
  auto error =
      store.scan_from(FlowKind<T>::family, prefix, [&](std::string_view key, std::string_view row) {
        if (key.substr(0, prefix.size()) != prefix) return false;
        auto item = FlowKind<T>::parse(row);
        if (item)
          out.push_back(std::move(*item));
        else
          spdlog::error("{}={} cannot be read: {}", FlowKind<T>::log, std::string(key),
                        item.error());
        return true;
      });
  if (!error.empty()) spdlog::error("reading the {}s: {}", FlowKind<T>::log, error);
  return out;
}

template <class T>
std::string get_response(uint64_t id, Store& store, api::ObjectRef::Reader ref) {
  auto item = load_stored<T>(store, ref_key(ref));
  if (!item) return not_found_response<T>(id, ref);
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  FlowKind<T>::set_one(r, *item);
  return to_bytes(b);
}

template <class T>
std::string list_response(uint64_t id, Store& store, api::ListFilter::Reader filter) {
  const auto items = load_all_stored<T>(store, filter.getNamespace());
  std::vector<const T*> pointers;
  for (const auto& item : items) pointers.push_back(&item);
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  FlowKind<T>::set_list(r, pointers);
  return to_bytes(b);
}

template std::optional<JobTemplate> load_stored<JobTemplate>(Store&, const std::string&);
template std::optional<JobFlow> load_stored<JobFlow>(Store&, const std::string&);
template std::vector<JobTemplate> load_all_stored<JobTemplate>(Store&, const std::string&);
template std::vector<JobFlow> load_all_stored<JobFlow>(Store&, const std::string&);
template std::string get_response<JobTemplate>(uint64_t, Store&, api::ObjectRef::Reader);
template std::string get_response<JobFlow>(uint64_t, Store&, api::ObjectRef::Reader);
template std::string list_response<JobTemplate>(uint64_t, Store&, api::ListFilter::Reader);
template std::string list_response<JobFlow>(uint64_t, Store&, api::ListFilter::Reader);
template std::string not_found_response<JobTemplate>(uint64_t, api::ObjectRef::Reader);
template std::string not_found_response<JobFlow>(uint64_t, api::ObjectRef::Reader);

}  // namespace caldera
