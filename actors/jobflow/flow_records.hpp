// JobTemplates and JobFlows as the store holds them: their records, and the client answers read
// from there (the flow actors write every change durably before anyone may see it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/jobflow/core/flow_submission.hpp"
#include "messages/api.capnp.h"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_template.hpp"
#include "messages/model/result.hpp"
#include "storage/store.hpp"

namespace caldera {

// What differs between the two kinds: store family, names in messages, record and response form.
template <class T>
struct FlowKind;

template <>
struct FlowKind<JobTemplate> {
  static constexpr Family family = Family::Templates;
  static constexpr const char* kind = "JobTemplate";             // Submitted.kind
  static constexpr const char* log = "jobtemplate";              // log lines
  static constexpr const char* resource = kJobTemplateResource;  // error messages
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
  static constexpr const char* resource = kJobFlowResource;
  static std::string key(const JobFlow& f) { return f.spec.key(); }
  static std::string record(const JobFlow& f);
  static Result<JobFlow> parse(std::string_view record);
  static void set_one(api::Response::Builder r, const JobFlow& f);
  static void set_list(api::Response::Builder r, const std::vector<const JobFlow*>& items);
};

// The stored object `key`: nullopt when there is none, or when it does not decode (logged).
template <class T>
std::optional<T> load_stored(Store& store, const std::string& key);

// Every stored object of the kind in namespace `ns` (every one when empty), in key order;
// unreadable records are logged and skipped.
template <class T>
std::vector<T> load_all_stored(Store& store, const std::string& ns);

// "namespace/name" of a reference; an empty namespace is "default".
std::string ref_key(api::ObjectRef::Reader ref);

// Answers to get (NOT_FOUND when absent) and list (namespace filter; empty: every namespace).
template <class T>
std::string get_response(uint64_t id, Store& store, api::ObjectRef::Reader ref);
template <class T>
std::string list_response(uint64_t id, Store& store, api::ListFilter::Reader filter);
template <class T>
std::string not_found_response(uint64_t id, api::ObjectRef::Reader ref);

}  // namespace caldera
