#include "actors/scheduler/actions/allocate/allocator.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "actors/scheduler/core/enqueue.hpp"
#include "actors/scheduler/core/predicates.hpp"
#include "messages/model/partition_order.hpp"

namespace caldera::sched {

namespace {

// What a pod asks of a node, as a key: its requests, its node selector and its tolerations.
std::string shape_of(const TaskInfo& task) {
  std::string key;
  for (const auto& [name, amount] : task.requests.values)
    key += name + '=' + std::to_string(amount) + ';';
  key += '|';
  for (const auto& [k, v] : task.node_selector) key += k + '=' + v + ';';
  for (const auto& t : task.tolerations)
    key += '|' + t.key + ' ' + t.op + ' ' + t.value + ' ' + t.effect;
  return key;
}

bool has_pending(const JobInfo& job) {
  return std::any_of(job.tasks.begin(), job.tasks.end(),
                     [](const TaskInfo& t) { return t.status == TaskStatus::Pending; });
}

// A session's search for nodes: it looks at the nodes round-robin from where it stopped last,
// and stops once it has found `wanted` that fit (or has seen them all).
class NodeSearch {
 public:
  NodeSearch(const Snapshot& s, size_t wanted, size_t start) : wanted_(wanted) {
    nodes_.reserve(s.nodes.size());
    for (const auto& [name, node] : s.nodes) nodes_.push_back(&node);
    next_ = nodes_.empty() ? 0 : start % nodes_.size();
  }
  size_t next() const { return next_; }
  void restart_at(size_t next) { next_ = next; }

  // The best-scored fitting node among those looked at, or null with every node's reasons in
  // `errors` (none fit: all were looked at).
  const NodeState* best(const TaskInfo& task, const NodeScoring& policy, FitErrors& errors) {
    const NodeState* best = nullptr;
    double best_score = 0;
    size_t found = 0, seen = 0;
    for (; seen < nodes_.size() && found < wanted_; ++seen) {
      const NodeState& node = *nodes_[(next_ + seen) % nodes_.size()];
      if (!fits(node, task)) continue;
      ++found;
      const double sc = score(policy, node, task);
      if (!best || sc > best_score) {
        best = &node;
        best_score = sc;
      }
    }
    if (!nodes_.empty()) next_ = (next_ + seen) % nodes_.size();
    // Reasons are words to build: only for a pod that fits nowhere, whose every node was seen.
    if (!best)
      for (const auto* node : nodes_) errors.add(refusals(*node, task));
    return best;
  }

 private:
  std::vector<const NodeState*> nodes_;
  size_t wanted_;
  size_t next_ = 0;
};

}  // namespace

// Per task, the pods its minimum still lacks beyond those holding a node (none when the task
// check does not apply: minAvailable below the sum of the task minimums).
std::map<std::string, int32_t> missing_task_pods(const JobInfo& job) {
  std::map<std::string, int32_t> out;
  if (job.task_min_available.empty() || job.min_available < job.task_min_available_total())
    return out;
  std::map<std::string, int32_t> held;
  for (const auto& t : job.tasks)
    if (allocated_status(t.status)) ++held[t.task];
  for (const auto& [task, min] : job.task_min_available)
    if (min > held[task]) out[task] = min - held[task];
  return out;
}

// A partition's pods one after another, where its first one stands: it is allocated whole or not
// at all.
std::vector<size_t> partitions_together(const JobInfo& job, std::vector<size_t> order) {
  using Key = std::pair<std::string, int32_t>;
  std::map<Key, std::vector<size_t>> members;
  for (size_t t : order)
    if (job.tasks[t].partition >= 0)
      members[{job.tasks[t].task, job.tasks[t].partition}].push_back(t);
  if (members.empty()) return order;
  std::vector<size_t> out;
  out.reserve(order.size());
  std::set<Key> placed;
  for (size_t t : order) {
    const auto& task = job.tasks[t];
    if (task.partition < 0) {
      out.push_back(t);
    } else if (placed.insert({task.task, task.partition}).second) {
      const auto& m = members[{task.task, task.partition}];
      out.insert(out.end(), m.begin(), m.end());
    }
  }
  return out;
}

std::vector<size_t> pending_in_order(const JobInfo& job) {
  std::vector<size_t> pending;
  for (size_t t = 0; t < job.tasks.size(); ++t)
    if (job.tasks[t].status == TaskStatus::Pending) pending.push_back(t);
  std::stable_sort(pending.begin(), pending.end(),
                   [&](size_t a, size_t b) { return task_before(job.tasks[a], job.tasks[b]); });
  order_partitions(
      pending, [&](size_t t) -> const std::string& { return job.tasks[t].task; },
      [&](size_t t) { return job.tasks[t].partition; });
  const auto need = missing_task_pods(job);
  if (need.empty()) return partitions_together(job, std::move(pending));
  std::map<std::string, int32_t> taken;
  std::vector<size_t> required, rest;
  for (size_t t : pending) {
    auto it = need.find(job.tasks[t].task);
    (it != need.end() && taken[it->first]++ < it->second ? required : rest).push_back(t);
  }
  required.insert(required.end(), rest.begin(), rest.end());
  return partitions_together(job, std::move(required));
}

std::vector<size_t> job_order(const Snapshot& s) {
  std::vector<std::pair<JobOrderKey, size_t>> keys;
  keys.reserve(s.jobs.size());
  for (size_t i = 0; i < s.jobs.size(); ++i) keys.emplace_back(job_order_key(s.jobs[i]), i);
  std::sort(keys.begin(), keys.end());
  std::vector<size_t> order;
  order.reserve(keys.size());
  for (const auto& [key, index] : keys) order.push_back(index);
  return order;
}

size_t nodes_to_find(size_t nodes, int configured) {
  if (configured > 0) return static_cast<size_t>(configured);
  constexpr size_t kMinNodes = 100;
  if (nodes <= kMinNodes) return nodes;
  const size_t percent = std::max<long>(5, 50 - static_cast<long>(nodes) / 125);
  return std::max(kMinNodes, nodes * percent / 100);
}

struct Allocator::Search {
  Search(const Snapshot& s, size_t wanted, size_t start) : nodes(s, wanted, start) {}
  NodeSearch nodes;
  std::map<std::string, FitErrors> unfit_shapes;  // asks that fit no node this session
};

Allocator::Allocator(Snapshot& s, const SessionOptions& options)
    : s_(s),
      options_(options),
      search_(std::make_unique<Search>(s, nodes_to_find(s.nodes.size(), options.nodes_to_find),
                                       options.search_start)) {}

size_t Allocator::next_search() const {
  return search_->nodes.next();
}

Allocator::~Allocator() = default;

void Allocator::allocate_job(size_t j, SessionResult& out, AllocateMode mode) {
  const bool commit = mode.commit;
  Snapshot& s = s_;
  const SessionOptions& options = options_;
  auto& search = search_->nodes;
  auto& unfit_shapes = search_->unfit_shapes;
  JobInfo& job = s.jobs[j];
  if (job.phase == PodGroupPhase::Pending || !has_pending(job)) return;
  // A dry run leaves the search where it was: where later gangs go does not depend on it.
  struct Rewind {
    NodeSearch& search;
    size_t at;
    bool on;
    ~Rewind() {
      if (on) search.restart_at(at);
    }
  } rewind{search, search.next(), !commit};
  if (auto invalid = job_valid(job)) {
    out.conditions[job.uid] = {false, invalid->reason, invalid->message};
    return;
  }
  auto queue = s.queues.find(job.queue);
  QueueInfo* q = queue == s.queues.end() ? nullptr : &queue->second;
  // A gang that is in (its stragglers wait) is passed over quietly: only one that is not is
  // told why (Volcano marks Unschedulable only what is not ready).
  if (q && overused(*q) && job_ready(job)) return;
  if (q && overused(*q)) {
    const auto why = at_capability(*q) ? fmt::format("queue {} is at its capability ({})", q->name,
                                                     resource_text(*q->capability))
                                       : share_message(*q);
    out.conditions[job.uid] = {
        false, "Overused",
        fmt::format("{}/{} tasks in gang unschedulable: {}",
                    job.min_available - job.ready_task_num(), job.tasks.size(), why)};
    return;
  }
  ResourceList queue_held = q ? q->allocated : ResourceList{};
  const std::vector<size_t> pending = pending_in_order(job);
  Statement stmt(s);
  FitErrors first_failure;  // the nodes' reasons for the first pod that fit nowhere
  std::string queue_full;   // or why its queue could not take it
  bool failed = false;
  // The pods of one task ask alike: once one fits nowhere, its siblings are not tried.
  std::set<std::string> unfit_tasks;
  // The partition being allocated (pods one after another): where it began, so that a pod of it
  // that fits nowhere takes back the others; and the pods of whole partitions, by task.
  struct {
    std::string task;
    int32_t id = -1;
    size_t mark = 0;
    ResourceList queue_held;
    int32_t pods = 0;
    bool failed = false;
  } part;
  std::map<std::string, int32_t> whole;
  auto close_partition = [&] {
    if (part.id >= 0 && !part.failed) whole[part.task] += part.pods;
    part = {};  // a pod without a partition after it is its own
  };
  auto fail_partition = [&] {
    if (part.id < 0 || part.failed) return;
    stmt.discard_from(part.mark);
    queue_held = part.queue_held;
    part.failed = true;
  };
  const bool until_ready = mode.until_ready && job.partition_min.empty();
  // Ready needs at least minAvailable pods counted: the full check only past that count.
  const int32_t counted_before =
      until_ready ? job.ready_task_num() + job.pending_best_effort_task_num() : 0;
  for (size_t t : pending) {
    const TaskInfo& task = job.tasks[t];
    if (task.best_effort()) continue;  // backfill's: it counts as ready, and needs no room
    if (task.partition != part.id || (task.partition >= 0 && task.task != part.task)) {
      close_partition();
      if (task.partition >= 0)
        part = {task.task, task.partition, stmt.size(), queue_held, 0, false};
    }
    if (part.failed) continue;  // the rest of a partition that cannot be whole
    if (unfit_tasks.count(task.task)) {
      fail_partition();
      continue;
    }
    // Over the queue's capability the pod fits no node: said as the queue's reason.
    if (q && !within_capability(*q, queue_held, task.requests)) {
      unfit_tasks.insert(task.task);
      fail_partition();
      if (!failed)
        queue_full =
            "queue " + q->name + " is at its capability (" + resource_text(*q->capability) + ")";
      failed = true;
      continue;
    }
    // Committed statements only fill nodes up, so an ask that fit nowhere while no statement
    // held anything fits nowhere for the rest of the session: a long queue of gangs that wait
    // costs one search per kind of ask, not one per gang. (A failure while this statement
    // holds room is its own: the discard gives that room back.)
    const NodeState* node = nullptr;
    FitErrors errors;
    auto known = unfit_shapes.end();
    if (mode.cached && !unfit_shapes.empty()) known = unfit_shapes.find(shape_of(task));
    if (known != unfit_shapes.end()) {
      errors = known->second;
    } else {
      node = search.best(task, options.scoring, errors);
      if (!node && stmt.size() == 0 && mode.cached) unfit_shapes.emplace(shape_of(task), errors);
    }
    if (!node) {
      unfit_tasks.insert(task.task);
      fail_partition();
      if (!failed) first_failure = std::move(errors);
      failed = true;
      continue;
    }
    stmt.allocate(j, t, node->name);
    queue_held.add(task.requests);
    ++part.pods;
    if (until_ready && !failed &&
        counted_before + static_cast<int32_t>(stmt.size()) >= job.min_available && job_ready(job))
      break;
  }
  close_partition();
  std::string partitions_short;  // a task whose whole partitions fall short of its minPartitions
  int32_t partition_pods_short = 0;
  for (const auto& [name, need] : job.partition_min) {
    if (whole[name] >= need) continue;
    partition_pods_short += need - whole[name];
    if (partitions_short.empty())
      partitions_short = fmt::format("task {} needs {} more pods in whole partitions, {} fit", name,
                                     need, whole[name]);
  }
  if ((job_ready(job) && partitions_short.empty()) || (!options.gang && stmt.size() > 0)) {
    if (!commit) {
      stmt.discard();
      out.conditions[job.uid] = {true, "Scheduled", "tasks in gang are ready to be scheduled"};
      return;
    }
    if (q) q->allocated = std::move(queue_held);
    auto ops = stmt.commit();
    out.operations.insert(out.operations.end(), std::make_move_iterator(ops.begin()),
                          std::make_move_iterator(ops.end()));
    out.conditions[job.uid] = {true, "Scheduled", "tasks in gang are ready to be scheduled"};
    return;
  }
  const auto allocated = static_cast<int32_t>(stmt.size());
  // Volcano's count (what minAvailable lacks once the discarded pods are counted in), or, when
  // only a task's minimum is short, the pods that minimum lacked with the statement's in.
  int32_t task_short = 0;
  for (const auto& [task, n] : missing_task_pods(job)) task_short += n;
  task_short = std::max(task_short, partition_pods_short);
  stmt.discard();
  const int32_t unready =
      std::max(job.min_available - (allocated + job.ready_task_num()), task_short);
  std::string why;
  if (!queue_full.empty())
    why = queue_full;
  else if (!partitions_short.empty() && !failed)
    why = partitions_short;
  else if (failed && !first_failure.empty())
    why = first_failure.message();
  else if (failed)
    why = "no nodes";
  else
    why = "the pods placed do not meet each task's minimum";
  out.conditions[job.uid] = {
      false, "NotEnoughResources",
      fmt::format("{}/{} tasks in gang unschedulable: {}", unready, job.tasks.size(), why)};
}

}  // namespace caldera::sched
