// The JobTemplates and JobFlows the coordinator serves: their latest durable values, their store
// records, and the client answers that only read them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "messages/api.capnp.h"
#include "messages/job_flow.hpp"
#include "messages/job_template.hpp"
#include "messages/result.hpp"
#include "storage/store.hpp"

namespace caldera {

// One kind's objects by "namespace/name".
template <class T>
struct Registry {
  std::map<std::string, T> durable;  // what get and list show
  std::set<std::string> creating;    // admitted, store write in flight: the name is taken

  bool taken(const std::string& key) const { return durable.count(key) || creating.count(key); }
  const T* find(const std::string& key) const {
    auto it = durable.find(key);
    return it == durable.end() ? nullptr : &it->second;
  }
};

struct FlowRegistry {
  Registry<JobTemplate> templates;
  Registry<JobFlow> flows;
};

// What differs between the two kinds: store family, names in messages, record and response form.
template <class T>
struct FlowKind;

template <>
struct FlowKind<JobTemplate> {
  static constexpr Family family = Family::Templates;
  static constexpr const char* kind = "JobTemplate";                       // Submitted.kind
  static constexpr const char* log = "jobtemplate";                        // log lines
  static constexpr const char* resource = "jobtemplates.flow.volcano.sh";  // error messages
  static std::string key(const JobTemplate& t) { return t.spec.key(); }
  static std::string record(const JobTemplate& t);
  static Result<JobTemplate> parse(std::string_view record);
  static void set_one(api::Response::Builder r, const JobTemplate& t);
  static void set_list(api::Response::Builder r, const std::vector<const JobTemplate*>& items);
};

template <>
struct FlowKind<JobFlow> {
  static constexpr Family family = Family::Flows;
  static constexpr const char* kind = "JobFlow";
  static constexpr const char* log = "jobflow";
  static constexpr const char* resource = "jobflows.flow.volcano.sh";
  static std::string key(const JobFlow& f) { return f.spec.key(); }
  static std::string record(const JobFlow& f);
  static Result<JobFlow> parse(std::string_view record);
  static void set_one(api::Response::Builder r, const JobFlow& f);
  static void set_list(api::Response::Builder r, const std::vector<const JobFlow*>& items);
};

// Loads both families into the registry; a record that does not decode is logged and skipped.
void recover(FlowRegistry& registry, Store& store);

// `kind "name" already exists in namespace ns`, Volcano's (Kubernetes') wording.
std::string already_exists(const char* resource, const std::string& ns, const std::string& name);

// "namespace/name" of a reference; an empty namespace is "default".
std::string ref_key(api::ObjectRef::Reader ref);

// Answers to get (NOT_FOUND when absent) and list (namespace filter; empty: every namespace).
template <class T>
std::string get_response(uint64_t id, const Registry<T>& reg, api::ObjectRef::Reader ref);
template <class T>
std::string list_response(uint64_t id, const Registry<T>& reg, api::ListFilter::Reader filter);
template <class T>
std::string not_found_response(uint64_t id, api::ObjectRef::Reader ref);

}  // namespace caldera
