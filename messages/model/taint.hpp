// Kubernetes' taints and tolerations: a node's taint keeps off the pods that do not tolerate it
// (NoSchedule, NoExecute); PreferNoSchedule only ranks the node lower elsewhere and binds nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace caldera {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule or NoExecute
  bool operator==(const Taint&) const = default;
};

struct Toleration {
  std::string key;           // "" with Exists: every key
  std::string op = "Equal";  // Equal or Exists
  std::string value;
  std::string effect;              // "": every effect
  std::optional<int64_t> seconds;  // tolerationSeconds (NoExecute): read, not applied
  bool operator==(const Toleration&) const = default;
};

// Whether `t` tolerates `taint` (Kubernetes' ToleratesTaint).
bool tolerates(const Toleration& t, const Taint& taint);

// The first of `taints` that keeps a pod with `tolerations` off its node (NoSchedule or
// NoExecute, not tolerated); nullopt when none does.
std::optional<Taint> untolerated(const std::vector<Taint>& taints,
                                 const std::vector<Toleration>& tolerations);

// "{dedicated: gpu}" (or "{dedicated}" without a value), as Kubernetes' message names a taint.
std::string taint_text(const Taint& t);

}  // namespace caldera
