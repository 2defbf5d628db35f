// Every job of a namespace, read page by page (the server answers at most 5,000 per request).
#pragma once

#include <string>

#include "client/client.hpp"

namespace caldera::bench {

// Calls fn(api::Job::Reader) for each job; false when a request failed. `summary`: without
// events, and with only the spec's identity (ListFilter.summary).
template <class Fn>
bool for_each_job(Client& c, const std::string& ns, Fn&& fn, bool summary = false) {
  std::string token;
  do {
    auto r = c.call([&](api::Request::Builder b) {
      auto f = b.initListJobs();
      f.setNamespace(ns);
      f.setLimit(5000);
      f.setContinue(token);
      f.setSummary(summary);
    });
    if (!r) return false;
    auto resp = r.value()->template root<api::Response>();
    for (auto j : resp.getJobs()) fn(j);
    token = resp.getContinue();
  } while (!token.empty());
  return true;
}

}  // namespace caldera::bench
