#include "messages/model/taint.hpp"

namespace caldera {

bool tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == taint.key;
  return t.key == taint.key && t.value == taint.value;
}

std::optional<Taint> untolerated(const std::vector<Taint>& taints,
                                 const std::vector<Toleration>& tolerations) {
  for (const auto& taint : taints) {
    if (taint.effect == "PreferNoSchedule") continue;
    bool ok = false;
    for (const auto& t : tolerations) ok = ok || tolerates(t, taint);
    if (!ok) return taint;
  }
  return std::nullopt;
}

std::string taint_text(const Taint& t) {
  return "{" + t.key + (t.value.empty() ? "" : ": " + t.value) + "}";
}

}  // namespace caldera
