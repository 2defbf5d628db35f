// What a job actor asks of the scheduler and what it answers: the pods of a job that wait for
// nodes (a gang), and their bindings. Value types of the scheduler's protocol.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "messages/model/queue.hpp"
#include "messages/model/resources.hpp"
#include "messages/model/taint.hpp"

namespace caldera {

struct PodAsk {
  std::string uid;
  ResourceList requests;
  std::string task;
  std::map<std::string, std::string> node_selector = {};  // labels its node must have
  std::string priority_class = {};  // its task's (Volcano's task priority): order in the gang
  int32_t partition = -1;           // its task's partition (partitionPolicy); -1: none
  std::vector<Toleration> tolerations = {};  // the node taints it may go past
};

// What the scheduler knows of a job's pod group beyond its pods: for queue shares and
// preemption.
struct PodGroupInfo {
  std::string queue = kDefaultQueue;
  std::string priority_class;  // "": the global default class's, else 0
  int32_t min_available = 0;   // the gang's minMember: preemption never takes the job below it
  bool operator==(const PodGroupInfo&) const = default;
};

// All pods of one job that wait for a node. min_count of them must be placed together (the job
// actor asks minAvailable minus what already runs), with at least task_min[t] pods of each task t
// among them; the rest are placed one by one as room appears.
struct GangRequest {
  std::string job_key;
  std::vector<PodAsk> pods;
  int32_t min_count = 0;
  std::map<std::string, int32_t> task_min;
  // Per task with partitionPolicy.minPartitions: the pods that whole partitions must still bring
  // (minPartitions x partitionSize, less what is bound). A partition's waiting pods are placed
  // all together or not at all, these or stragglers.
  std::map<std::string, int32_t> partition_min = {};
  int32_t placed = 0;  // the job's pods bound already (for the message when the rest do not fit)
  // The job's place in the queue: a job that asks again keeps it (0: the order of its requests).
  int64_t created_ms = 0;
  PodGroupInfo group = {};
};

struct Binding {
  std::string job_key;
  std::string uid;
  std::string node;
  std::string host_ip;  // the node's address, the pod's hostIP
  ResourceList requests;
};

}  // namespace caldera
