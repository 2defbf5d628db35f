// What a decision of the job controller asks the world to do, applied by the actor shell only
// after the new state is durable (DESIGN rule 3).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "messages/model/job_status.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

struct PodKillEffect {
  std::string uid;
  std::string node;
  std::string reason;
  std::string evict_reason = {};   // set: the pod ends Failed with it (PodKill.evictReason)
  int64_t grace_ms = kPodGraceMs;  // SIGTERM -> SIGKILL (pod_grace_ms)
};

// A pod on a node, by uid.
struct PodRef {
  std::string uid;
  std::string node;
};

// Plugin files a running pod gets again (its task's hosts changed: pods placed, a job scaled).
struct PodFilesEffect {
  std::string uid;
  std::string node;
  std::map<std::string, std::string> files;  // relative to the pod's directory -> content
};

struct PhaseChange {
  JobPhase from;
  JobPhase to;
  std::string reason;
};

struct Effects {
  std::vector<std::string> launch;    // pod names placed on a node and ready to start
  std::vector<PodKillEffect> kill;    // pods to stop
  std::vector<PodKillEffect> remove;  // pods (and logs) the node may forget once they end
  std::vector<std::string> release;   // pod uids whose resources the scheduler can take back
  // Pods their node reported ended (a status it numbered): the one effect that need not wait for
  // the job's write (DESIGN rule 3). The node gave their room back as they ended, before it wrote
  // and reported the end (rule 5: a pod refused or never started holds none either), so the
  // scheduler taking it back now cannot over-commit the node, whose own accounting refuses a
  // bind that does not fit in any case; and a release the scheduler hears twice does nothing.
  // Their room goes back at once, a store commit sooner, so the next gang is bound sooner.
  std::vector<std::string> ended;
  // Placements the job did not take: their nodes hold them reserved (DESIGN rule 6) and let
  // them go at once instead of when the reservation expires.
  std::vector<PodRef> unreserve;
  std::vector<PodFilesEffect> files;
  bool request_placement = false;  // some pods wait for a node
  std::vector<PhaseChange> phase_changes;
  bool expired = false;  // ttlSecondsAfterFinished has passed: the job is to be deleted
  bool changed = false;  // the model changed and must be persisted
  // A client command the job's phase ignores: why, for the client; nothing else happened.
  std::string refused;

  void merge(Effects other);
};

}  // namespace caldera
