#include "messages/model/batch_job_status.hpp"

namespace caldera {

const BatchJobCondition* find_condition(const BatchJobStatus& s, const std::string& type) {
  for (const auto& c : s.conditions)
    if (c.type == type) return &c;
  return nullptr;
}

bool has_true_condition(const BatchJobStatus& s, const std::string& type) {
  const auto* c = find_condition(s, type);
  return c && c->status == "True";
}

}  // namespace caldera
