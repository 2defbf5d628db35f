// A JobFlow's httpGet and tcpSocket probes made on the network, each bounded by a deadline: they
// block, so the flow actor runs them on a thread of their own.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "messages/model/job_flow.hpp"

namespace caldera {

// Whether host:port accepts a TCP connection within `wait`.
bool tcp_answers(const std::string& host, int32_t port, std::chrono::milliseconds wait);

// Whether `GET probe.path` at host:probe.port answers with a status from 200 to 399 within
// `wait`, as a kubelet's httpGet probe counts (a redirect is not followed: it passes).
bool http_answers(const std::string& host, const HttpGetProbe& probe,
                  std::chrono::milliseconds wait);

}  // namespace caldera
