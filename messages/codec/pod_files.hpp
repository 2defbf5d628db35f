// The coordinator's order to a node to write a running pod's plugin files again (cluster.capnp
// PodFiles), as bytes.
#pragma once

#include <map>
#include <string>

namespace caldera {

std::string pod_files_bytes(const std::string& uid,
                            const std::map<std::string, std::string>& files);

}  // namespace caldera
