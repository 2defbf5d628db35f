// Fresh unique ids for jobs and pods, shaped like Kubernetes uids (8-4-4-4-12 hex).
#pragma once

#include <string>

namespace caldera {

std::string random_uid();

}  // namespace caldera
