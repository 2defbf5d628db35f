#include "messages/codec/codec.hpp"

#include <optional>

#include "messages/codec/batch_job_codec.hpp"

namespace caldera {
namespace {

capnp::Text::Reader text(const std::string& s) {
  return {s.data(), s.size()};
}
capnp::Text::Reader text(std::string_view s) {
  return {s.data(), s.size()};
}
std::string str(capnp::Text::Reader t) {
  return std::string(t.cStr(), t.size());
}

std::string indexed(const std::string& path, const char* field, size_t i) {
  return path + "." + field + "[" + std::to_string(i) + "]";
}

void encode_strings(const std::vector<std::string>& in, capnp::List<capnp::Text>::Builder out) {
  for (capnp::uint i = 0; i < in.size(); ++i) out.set(i, text(in[i]));
}

std::vector<std::string> decode_strings(capnp::List<capnp::Text>::Reader in) {
  std::vector<std::string> out;
  out.reserve(in.size());
  for (auto t : in) out.push_back(str(t));
  return out;
}

// A node's allocatable may dip below zero when pods were placed before its capacity shrank;
// parse_quantity rejects a sign, so our own data carries it in front.
std::optional<MilliValue> parse_signed_quantity(std::string_view s) {
  if (!s.empty() && s[0] == '-') {
    auto v = parse_quantity(s.substr(1));
    if (v) return -*v;
    return std::nullopt;
  }
  return parse_quantity(s);
}

ResourceList decode_own_resources(capnp::List<api::KeyValue>::Reader in) {
  ResourceList out;
  for (auto kv : in)
    if (auto v = parse_signed_quantity(str(kv.getValue()))) out.values[str(kv.getKey())] = *v;
  return out;
}

void encode_policies(const std::vector<LifecyclePolicy>& in,
                     capnp::List<api::LifecyclePolicy>::Builder out) {
  for (capnp::uint i = 0; i < in.size(); ++i) {
    const auto& p = in[i];
    auto b = out[i];
    auto events = b.initEvents(p.events.size());
    for (capnp::uint e = 0; e < p.events.size(); ++e) events.set(e, text(to_string(p.events[e])));
    b.setAction(text(to_string(p.action)));
    b.setHasExitCode(p.exit_code.has_value());
    b.setExitCode(p.exit_code.value_or(0));
    b.setTimeoutMs(p.timeout_ms.value_or(0));
  }
}

std::vector<LifecyclePolicy> decode_policies(capnp::List<api::LifecyclePolicy>::Reader in,
                                             Diagnostics& diags, const std::string& path) {
  std::vector<LifecyclePolicy> out;
  out.reserve(in.size());
  for (capnp::uint i = 0; i < in.size(); ++i) {
    auto r = in[i];
    std::string at = indexed(path, "policies", i);
    LifecyclePolicy p;
    auto events = r.getEvents();
    for (capnp::uint e = 0; e < events.size(); ++e) {
      std::string word = str(events[e]);
      if (auto ev = parse_event(word))
        p.events.push_back(*ev);
      else
        diags.error(indexed(at, "events", e), "unknown event \"" + word + "\"");
    }
    std::string action = str(r.getAction());
    if (auto a = parse_action(action))
      p.action = *a;
    else
      diags.error(at + ".action", "unknown action \"" + action + "\"");
    if (r.getHasExitCode()) p.exit_code = r.getExitCode();
    if (r.getTimeoutMs() > 0) p.timeout_ms = r.getTimeoutMs();
    out.push_back(std::move(p));
  }
  return out;
}

void encode_container(const Container& in, api::Container::Builder out) {
  out.setName(text(in.name));
  out.setImage(text(in.image));
  encode_strings(in.command, out.initCommand(in.command.size()));
  encode_strings(in.args, out.initArgs(in.args.size()));
  auto env = out.initEnv(in.env.size());
  for (capnp::uint i = 0; i < in.env.size(); ++i) {
    env[i].setName(text(in.env[i].name));
    env[i].setValue(text(in.env[i].value));
    env[i].setFieldPath(text(in.env[i].field_path));
  }
  out.setWorkingDir(text(in.working_dir));
  encode(in.requests, out.initRequests(in.requests.values.size()));
  encode(in.limits, out.initLimits(in.limits.values.size()));
}

Container decode_container(api::Container::Reader in, Diagnostics& diags, const std::string& path) {
  Container c;
  c.name = str(in.getName());
  c.image = str(in.getImage());
  c.command = decode_strings(in.getCommand());
  c.args = decode_strings(in.getArgs());
  for (auto e : in.getEnv())
    c.env.push_back({str(e.getName()), str(e.getValue()), str(e.getFieldPath())});
  c.working_dir = str(in.getWorkingDir());
  c.requests = decode(in.getRequests(), diags, path + ".resources.requests");
  c.limits = decode(in.getLimits(), diags, path + ".resources.limits");
  return c;
}

void encode_task(const TaskSpec& in, api::TaskSpec::Builder out) {
  out.setName(text(in.name));
  out.setReplicas(in.replicas);
  out.setMinAvailable(in.min_available.value_or(-1));
  out.setMaxRetry(in.max_retry.value_or(-1));
  encode_policies(in.policies, out.initPolicies(in.policies.size()));
  if (in.depends_on) {
    auto d = out.initDependsOn();
    encode_strings(in.depends_on->names, d.initNames(in.depends_on->names.size()));
    d.setIteration(text(in.depends_on->iteration));
    d.setCondition(text(in.depends_on->condition));
  }
  if (in.partition_policy) {
    auto p = out.initPartitionPolicy();
    p.setPartitionSize(in.partition_policy->partition_size);
    p.setMinPartitions(in.partition_policy->min_partitions);
  }
  auto t = out.initTemplate();
  encode_map(in.template_.labels, t.initLabels(in.template_.labels.size()));
  encode_map(in.template_.annotations, t.initAnnotations(in.template_.annotations.size()));
  auto containers = t.initContainers(in.template_.containers.size());
  for (capnp::uint i = 0; i < in.template_.containers.size(); ++i)
    encode_container(in.template_.containers[i], containers[i]);
  t.setRestartPolicy(text(in.template_.restart_policy));
  encode_map(in.template_.node_selector, t.initNodeSelector(in.template_.node_selector.size()));
  t.setTerminationGracePeriodSeconds(in.template_.termination_grace_seconds.value_or(-1));
  t.setPriorityClassName(text(in.template_.priority_class_name));
  auto tolerations = t.initTolerations(static_cast<capnp::uint>(in.template_.tolerations.size()));
  for (capnp::uint i = 0; i < tolerations.size(); ++i) {
    const auto& tol = in.template_.tolerations[i];
    tolerations[i].setKey(text(tol.key));
    tolerations[i].setOperator(text(tol.op));
    tolerations[i].setValue(text(tol.value));
    tolerations[i].setEffect(text(tol.effect));
    tolerations[i].setTolerationSeconds(tol.seconds.value_or(-1));
  }
}

TaskSpec decode_task(api::TaskSpec::Reader in, Diagnostics& diags, const std::string& path) {
  TaskSpec t;
  t.name = str(in.getName());
  t.replicas = in.getReplicas();
  if (in.getMinAvailable() >= 0) t.min_available = in.getMinAvailable();
  if (in.getMaxRetry() >= 0) t.max_retry = in.getMaxRetry();
  t.policies = decode_policies(in.getPolicies(), diags, path);
  if (in.hasDependsOn()) {
    auto d = in.getDependsOn();
    DependsOn dep;
    dep.names = decode_strings(d.getNames());
    if (d.getIteration().size() > 0) dep.iteration = str(d.getIteration());
    if (d.getCondition().size() > 0) dep.condition = str(d.getCondition());
    t.depends_on = std::move(dep);
  }
  if (in.hasPartitionPolicy()) {
    auto p = in.getPartitionPolicy();
    t.partition_policy = PartitionPolicy{p.getPartitionSize(), p.getMinPartitions()};
  }
  auto tpl = in.getTemplate();
  t.template_.labels = decode_map(tpl.getLabels());
  t.template_.annotations = decode_map(tpl.getAnnotations());
  auto containers = tpl.getContainers();
  for (capnp::uint i = 0; i < containers.size(); ++i)
    t.template_.containers.push_back(
        decode_container(containers[i], diags, indexed(path + ".template.spec", "containers", i)));
  t.template_.restart_policy = str(tpl.getRestartPolicy());
  t.template_.node_selector = decode_map(tpl.getNodeSelector());
  if (tpl.getTerminationGracePeriodSeconds() != -1)
    t.template_.termination_grace_seconds = tpl.getTerminationGracePeriodSeconds();
  t.template_.priority_class_name = str(tpl.getPriorityClassName());
  for (auto tol : tpl.getTolerations()) {
    Toleration x{str(tol.getKey()), str(tol.getOperator()), str(tol.getValue()),
                 str(tol.getEffect()), std::nullopt};
    if (x.op.empty()) x.op = "Equal";
    if (tol.getTolerationSeconds() != -1) x.seconds = tol.getTolerationSeconds();
    t.template_.tolerations.push_back(std::move(x));
  }
  return t;
}

void encode_container_status(const ContainerStatus& in, api::ContainerStatus::Builder out) {
  out.setName(text(in.name));
  out.setState(text(to_string(in.state)));
  out.setExitCode(in.exit_code);
  out.setSignal(in.signal);
  out.setReason(text(in.reason));
  out.setStartedMs(in.started_ms);
  out.setFinishedMs(in.finished_ms);
}

ContainerStatus decode_container_status(api::ContainerStatus::Reader in) {
  ContainerStatus c;
  c.name = str(in.getName());
  c.state = parse_container_state(str(in.getState())).value_or(ContainerState::Waiting);
  c.exit_code = in.getExitCode();
  c.signal = in.getSignal();
  c.reason = str(in.getReason());
  c.started_ms = in.getStartedMs();
  c.finished_ms = in.getFinishedMs();
  return c;
}

// Like decode_map, but a key given twice is reported at `path`.<key> instead of overwritten.
std::map<std::string, std::string> decode_unique_map(capnp::List<api::KeyValue>::Reader in,
                                                     Diagnostics& diags, const std::string& path) {
  std::map<std::string, std::string> out;
  for (auto kv : in)
    if (!out.emplace(str(kv.getKey()), str(kv.getValue())).second)
      diags.error(path + "." + str(kv.getKey()), "key given twice");
  return out;
}

}  // namespace

void encode(const Container& in, api::Container::Builder out) {
  encode_container(in, out);
}

Container decode(api::Container::Reader in, Diagnostics& diags, const std::string& path) {
  return decode_container(in, diags, path);
}

void encode_map(const std::map<std::string, std::string>& in,
                capnp::List<api::KeyValue>::Builder out) {
  capnp::uint i = 0;
  for (const auto& [k, v] : in) {
    out[i].setKey(text(k));
    out[i].setValue(text(v));
    ++i;
  }
}

std::map<std::string, std::string> decode_map(capnp::List<api::KeyValue>::Reader in) {
  std::map<std::string, std::string> out;
  for (auto kv : in) out[str(kv.getKey())] = str(kv.getValue());
  return out;
}

void encode(const ResourceList& in, capnp::List<api::KeyValue>::Builder out) {
  capnp::uint i = 0;
  for (const auto& [k, v] : in.values) {
    out[i].setKey(text(k));
    out[i].setValue(text(format_quantity(v)));
    ++i;
  }
}

ResourceList decode(capnp::List<api::KeyValue>::Reader in, Diagnostics& diags,
                    const std::string& path) {
  ResourceList out;
  for (auto kv : in) {
    std::string key = str(kv.getKey());
    std::string value = str(kv.getValue());
    if (auto v = parse_quantity(value))
      out.values[key] = *v;
    else
      diags.error(path + "." + key, "invalid quantity \"" + value + "\"");
  }
  return out;
}

void encode(const JobSpec& in, api::JobSpec::Builder out) {
  out.setName(text(in.name));
  out.setNamespace(text(in.namespace_));
  encode_map(in.labels, out.initLabels(in.labels.size()));
  encode_map(in.annotations, out.initAnnotations(in.annotations.size()));
  out.setMinAvailable(in.min_available.value_or(-1));
  out.setMinSuccess(in.min_success.value_or(-1));
  out.setMaxRetry(in.max_retry.value_or(-1));
  out.setQueue(text(in.queue));
  out.setPriorityClassName(text(in.priority_class_name));
  out.setSchedulerName(text(in.scheduler_name));
  encode_policies(in.policies, out.initPolicies(in.policies.size()));
  auto plugins = out.initPlugins(in.plugins.size());
  for (capnp::uint i = 0; i < in.plugins.size(); ++i) {
    plugins[i].setName(text(in.plugins[i].name));
    encode_strings(in.plugins[i].args, plugins[i].initArgs(in.plugins[i].args.size()));
  }
  out.setTtlSecondsAfterFinished(in.ttl_seconds_after_finished.value_or(-1));
  out.setActiveDeadlineSeconds(in.active_deadline_seconds.value_or(-1));
  auto tasks = out.initTasks(in.tasks.size());
  for (capnp::uint i = 0; i < in.tasks.size(); ++i) encode_task(in.tasks[i], tasks[i]);
  if (in.batch) encode(*in.batch, out.initBatch());
  out.setGeneration(in.generation);
}

JobSpec decode(api::JobSpec::Reader in, Diagnostics& diags, const std::string& path) {
  JobSpec s;
  s.name = str(in.getName());
  s.namespace_ = str(in.getNamespace());
  s.labels = decode_map(in.getLabels());
  s.annotations = decode_map(in.getAnnotations());
  if (in.getMinAvailable() >= 0) s.min_available = in.getMinAvailable();
  if (in.getMinSuccess() >= 0) s.min_success = in.getMinSuccess();
  if (in.getMaxRetry() >= 0) s.max_retry = in.getMaxRetry();
  s.queue = str(in.getQueue());
  s.priority_class_name = str(in.getPriorityClassName());
  s.scheduler_name = str(in.getSchedulerName());
  s.policies = decode_policies(in.getPolicies(), diags, path);
  for (auto p : in.getPlugins())
    s.plugins.push_back({str(p.getName()), decode_strings(p.getArgs())});
  if (in.getTtlSecondsAfterFinished() >= 0)
    s.ttl_seconds_after_finished = in.getTtlSecondsAfterFinished();
  if (in.getActiveDeadlineSeconds() >= 0) s.active_deadline_seconds = in.getActiveDeadlineSeconds();
  auto tasks = in.getTasks();
  for (capnp::uint i = 0; i < tasks.size(); ++i)
    s.tasks.push_back(decode_task(tasks[i], diags, indexed(path, "tasks", i)));
  if (in.hasBatch()) s.batch = decode(in.getBatch());
  if (in.getGeneration() > 0) s.generation = in.getGeneration();
  return s;
}

namespace {

void encode_task_counts(const std::map<std::string, TaskStatusCount>& in,
                        capnp::List<api::TaskStatusCount>::Builder out) {
  capnp::uint i = 0;
  for (const auto& [name, c] : in) {
    auto b = out[i++];
    b.setName(text(name));
    b.setPending(c.pending);
    b.setRunning(c.running);
    b.setSucceeded(c.succeeded);
    b.setFailed(c.failed);
    b.setUnknown(c.unknown);
  }
}

std::map<std::string, TaskStatusCount> decode_task_counts(
    capnp::List<api::TaskStatusCount>::Reader in) {
  std::map<std::string, TaskStatusCount> out;
  for (auto c : in)
    out[str(c.getName())] = {c.getPending(), c.getRunning(), c.getSucceeded(), c.getFailed(),
                             c.getUnknown()};
  return out;
}

}  // namespace

void encode_counts(const JobStatus& in, api::JobStatus::Builder out) {
  auto state = out.initState();
  state.setPhase(text(to_string(in.state.phase)));
  state.setReason(text(in.state.reason));
  state.setMessage(text(in.state.message));
  state.setLastTransitionMs(in.state.last_transition_ms);
  out.setMinAvailable(in.min_available);
  out.setPending(in.pending);
  out.setRunning(in.running);
  out.setSucceeded(in.succeeded);
  out.setFailed(in.failed);
  out.setTerminating(in.terminating);
  out.setUnknown(in.unknown);
  out.setVersion(in.version);
  out.setRetryCount(in.retry_count);
  out.setPodGroupPhase(in.pod_group_phase);
  if (in.batch) encode(*in.batch, out.initBatch());
}

void encode(const JobStatus& in, api::JobStatus::Builder out) {
  encode_counts(in, out);
  encode_task_counts(in.task_status_count, out.initTaskStatusCount(in.task_status_count.size()));
  auto conditions = out.initConditions(in.conditions.size());
  for (capnp::uint j = 0; j < in.conditions.size(); ++j) {
    conditions[j].setStatus(text(to_string(in.conditions[j].status)));
    conditions[j].setLastTransitionMs(in.conditions[j].last_transition_ms);
  }
  out.setRunningDurationMs(in.running_duration_ms);
  out.setObservedGeneration(in.observed_generation);
}

JobStatus decode(api::JobStatus::Reader in) {
  JobStatus s;
  auto state = in.getState();
  s.state.phase = parse_job_phase(str(state.getPhase())).value_or(JobPhase::Pending);
  s.state.reason = str(state.getReason());
  s.state.message = str(state.getMessage());
  s.state.last_transition_ms = state.getLastTransitionMs();
  s.min_available = in.getMinAvailable();
  s.pending = in.getPending();
  s.running = in.getRunning();
  s.succeeded = in.getSucceeded();
  s.failed = in.getFailed();
  s.terminating = in.getTerminating();
  s.unknown = in.getUnknown();
  s.version = in.getVersion();
  s.retry_count = in.getRetryCount();
  s.task_status_count = decode_task_counts(in.getTaskStatusCount());
  for (auto c : in.getConditions())
    s.conditions.push_back(
        {parse_job_phase(str(c.getStatus())).value_or(JobPhase::Pending), c.getLastTransitionMs()});
  s.running_duration_ms = in.getRunningDurationMs();
  s.pod_group_phase = str(in.getPodGroupPhase());
  if (in.hasBatch()) s.batch = decode(in.getBatch());
  s.observed_generation = in.getObservedGeneration();
  return s;
}

void encode(const Job& in, api::Job::Builder out) {
  encode_without_spec(in, out);
  encode(in.spec, out.initSpec());
}

void encode_without_spec(const Job& in, api::Job::Builder out) {
  out.setUid(text(in.uid));
  out.setCreatedMs(in.created_ms);
  encode(in.status, out.initStatus());
  auto events = out.initEvents(static_cast<capnp::uint>(in.events.size()));
  for (capnp::uint i = 0; i < in.events.size(); ++i) {
    const auto& e = in.events[i];
    events[i].setTimeMs(e.time_ms);
    events[i].setType(text(e.type));
    events[i].setReason(text(e.reason));
    events[i].setMessage(text(e.message));
  }
}

Job decode(api::Job::Reader in) {
  Job j;
  j.uid = str(in.getUid());
  j.created_ms = in.getCreatedMs();
  Diagnostics ignored;  // our own data: words were checked when the spec was admitted
  j.spec = decode(in.getSpec(), ignored);
  j.status = decode(in.getStatus());
  for (auto e : in.getEvents())
    j.events.push_back({e.getTimeMs(), str(e.getType()), str(e.getReason()), str(e.getMessage())});
  return j;
}

void encode(const Pod& in, api::Pod::Builder out) {
  out.setName(text(in.name));
  out.setUid(text(in.uid));
  out.setNamespace(text(in.namespace_));
  out.setJobName(text(in.job_name));
  out.setTaskName(text(in.task_name));
  out.setIndex(in.index);
  out.setJobVersion(in.job_version);
  out.setNode(text(in.node));
  out.setPhase(text(to_string(in.phase)));
  out.setReason(text(in.reason));
  out.setMessage(text(in.message));
  auto containers = out.initContainers(in.containers.size());
  for (capnp::uint i = 0; i < in.containers.size(); ++i)
    encode_container_status(in.containers[i], containers[i]);
  out.setCreatedMs(in.created_ms);
  out.setStartedMs(in.started_ms);
  out.setFinishedMs(in.finished_ms);
  out.setOutOfSync(in.out_of_sync);
  out.setPartition(in.partition);
  out.setHostIp(text(in.host_ip));
  out.setStatusSeq(in.status_seq);
  if (in.batch_job) out.setJobKind(kBatchJobResource);
}

Pod decode(api::Pod::Reader in) {
  Pod p;
  p.name = str(in.getName());
  p.uid = str(in.getUid());
  p.namespace_ = str(in.getNamespace());
  p.job_name = str(in.getJobName());
  p.task_name = str(in.getTaskName());
  p.index = in.getIndex();
  p.job_version = in.getJobVersion();
  p.node = str(in.getNode());
  p.phase = parse_pod_phase(str(in.getPhase())).value_or(PodPhase::Unknown);
  p.reason = str(in.getReason());
  p.message = str(in.getMessage());
  for (auto c : in.getContainers()) p.containers.push_back(decode_container_status(c));
  p.created_ms = in.getCreatedMs();
  p.started_ms = in.getStartedMs();
  p.finished_ms = in.getFinishedMs();
  p.out_of_sync = in.getOutOfSync();
  p.partition = in.getPartition();
  p.host_ip = str(in.getHostIp());
  p.status_seq = in.getStatusSeq();
  p.batch_job = in.getJobKind() == kBatchJobResource;
  return p;
}

void encode(const NodeInfo& in, api::NodeInfo::Builder out) {
  out.setName(text(in.name));
  out.setAddress(text(in.address));
  out.setReady(in.ready);
  encode(in.capacity, out.initCapacity(in.capacity.values.size()));
  encode(in.allocatable, out.initAllocatable(in.allocatable.values.size()));
  out.setPods(in.pods);
  out.setCoordinator(in.coordinator);
  encode(in.allocated, out.initAllocated(in.allocated.values.size()));
  out.setReason(text(in.reason));
  out.setIncarnation(in.incarnation);
  out.setJoinedMs(in.joined_ms);
  out.setLastHeartbeatMs(in.last_heartbeat_ms);
  encode_map(in.labels, out.initLabels(static_cast<unsigned>(in.labels.size())));
  encode(in.presented, out.initPresented(in.presented.values.size()));
}

ResourceList decode_resources(capnp::List<api::KeyValue>::Reader in) {
  return decode_own_resources(in);
}

NodeInfo decode(api::NodeInfo::Reader in) {
  NodeInfo n;
  n.name = str(in.getName());
  n.address = str(in.getAddress());
  n.ready = in.getReady();
  n.capacity = decode_own_resources(in.getCapacity());
  n.allocatable = decode_own_resources(in.getAllocatable());
  n.pods = in.getPods();
  n.coordinator = in.getCoordinator();
  n.allocated = decode_own_resources(in.getAllocated());
  n.reason = str(in.getReason());
  n.incarnation = in.getIncarnation();
  n.joined_ms = in.getJoinedMs();
  n.last_heartbeat_ms = in.getLastHeartbeatMs();
  n.labels = decode_map(in.getLabels());
  n.presented = decode_own_resources(in.getPresented());
  return n;
}

void encode(const JobTemplate& in, api::JobTemplate::Builder out) {
  out.setUid(text(in.uid));
  out.setCreatedMs(in.created_ms);
  encode(in.spec, out.initSpec());
}

JobTemplate decode(api::JobTemplate::Reader in) {
  JobTemplate t;
  t.uid = str(in.getUid());
  t.created_ms = in.getCreatedMs();
  Diagnostics ignored;  // our own data, admitted as a Job spec
  t.spec = decode(in.getSpec(), ignored);
  return t;
}

void encode(const JobFlowSpec& in, api::JobFlowSpec::Builder out) {
  out.setName(text(in.name));
  out.setNamespace(text(in.namespace_));
  encode_map(in.labels, out.initLabels(in.labels.size()));
  encode_map(in.annotations, out.initAnnotations(in.annotations.size()));
  auto flows = out.initFlows(in.flows.size());
  for (capnp::uint i = 0; i < in.flows.size(); ++i) {
    flows[i].setName(text(in.flows[i].name));
    if (const auto& dep = in.flows[i].depends_on) {
      auto d = flows[i].initDependsOn();
      encode_strings(dep->targets, d.initTargets(dep->targets.size()));
      auto probes = d.initProbe(dep->probe.size());
      for (capnp::uint j = 0; j < dep->probe.size(); ++j) {
        probes[j].setTaskName(text(dep->probe[j].task_name));
        probes[j].setPhase(text(dep->probe[j].phase));
      }
      auto gets = d.initHttpGet(dep->http_get.size());
      for (capnp::uint j = 0; j < dep->http_get.size(); ++j) {
        const auto& g = dep->http_get[j];
        gets[j].setTaskName(text(g.task_name));
        gets[j].setPath(text(g.path));
        gets[j].setPort(g.port);
        gets[j].setHeaderName(text(g.header_name));
        gets[j].setHeaderValue(text(g.header_value));
      }
      auto sockets = d.initTcpSocket(dep->tcp_socket.size());
      for (capnp::uint j = 0; j < dep->tcp_socket.size(); ++j) {
        sockets[j].setTaskName(text(dep->tcp_socket[j].task_name));
        sockets[j].setPort(dep->tcp_socket[j].port);
      }
    }
    flows[i].setRetry(in.flows[i].retry);
    if (in.flows[i].patch) encode(*in.flows[i].patch, flows[i].initPatch());
  }
  out.setJobRetainPolicy(text(in.job_retain_policy));
}

JobFlowSpec decode(api::JobFlowSpec::Reader in, Diagnostics& diags) {
  JobFlowSpec s;
  s.name = str(in.getName());
  s.namespace_ = str(in.getNamespace());
  s.labels = decode_unique_map(in.getLabels(), diags, "metadata.labels");
  s.annotations = decode_unique_map(in.getAnnotations(), diags, "metadata.annotations");
  for (auto f : in.getFlows()) {
    Flow flow{str(f.getName()), std::nullopt, f.getRetry()};
    if (f.hasPatch()) {
      flow.patch = decode(f.getPatch(), diags, "patch.spec");
    }
    if (f.hasDependsOn()) {
      auto d = f.getDependsOn();
      flow.depends_on = FlowDependsOn{decode_strings(d.getTargets()), {}};
      for (auto p : d.getProbe())
        flow.depends_on->probe.push_back({str(p.getTaskName()), str(p.getPhase())});
      for (auto g : d.getHttpGet())
        flow.depends_on->http_get.push_back({str(g.getTaskName()), str(g.getPath()), g.getPort(),
                                             str(g.getHeaderName()), str(g.getHeaderValue())});
      for (auto t : d.getTcpSocket())
        flow.depends_on->tcp_socket.push_back({str(t.getTaskName()), t.getPort()});
    }
    s.flows.push_back(std::move(flow));
  }
  s.job_retain_policy = str(in.getJobRetainPolicy());
  return s;
}

void encode(const JobFlowStatus& in, api::JobFlowStatus::Builder out) {
  auto state = out.initState();
  state.setPhase(text(in.phase));
  state.setReason(text(in.reason));
  state.setMessage(text(in.message));
  state.setLastTransitionMs(in.last_transition_ms);
  encode_strings(in.pending_jobs, out.initPendingJobs(in.pending_jobs.size()));
  encode_strings(in.running_jobs, out.initRunningJobs(in.running_jobs.size()));
  encode_strings(in.completed_jobs, out.initCompletedJobs(in.completed_jobs.size()));
  encode_strings(in.failed_jobs, out.initFailedJobs(in.failed_jobs.size()));
  encode_strings(in.terminated_jobs, out.initTerminatedJobs(in.terminated_jobs.size()));
  encode_strings(in.unknown_jobs, out.initUnknownJobs(in.unknown_jobs.size()));
  auto list = out.initJobStatusList(in.job_status_list.size());
  for (capnp::uint i = 0; i < in.job_status_list.size(); ++i) {
    const auto& j = in.job_status_list[i];
    auto b = list[i];
    b.setName(text(j.name));
    b.setUid(text(j.uid));
    b.setState(text(j.state));
    b.setStartMs(j.start_ms);
    b.setEndMs(j.end_ms);
    b.setRestartCount(j.restart_count);
    auto hist = b.initRunningHistories(j.running_histories.size());
    for (capnp::uint h = 0; h < j.running_histories.size(); ++h) {
      hist[h].setState(text(j.running_histories[h].state));
      hist[h].setStartMs(j.running_histories[h].start_ms);
      hist[h].setEndMs(j.running_histories[h].end_ms);
    }
  }
  auto conditions = out.initConditions(in.conditions.size());
  capnp::uint c = 0;
  for (const auto& [job, cond] : in.conditions) {
    auto b = conditions[c++];
    b.setJob(text(job));
    b.setPhase(text(cond.phase));
    b.setCreateMs(cond.create_ms);
    b.setRunningDurationMs(cond.running_duration_ms);
    encode_task_counts(cond.task_status_count,
                       b.initTaskStatusCount(cond.task_status_count.size()));
  }
}

JobFlowStatus decode(api::JobFlowStatus::Reader in) {
  JobFlowStatus s;
  s.phase = str(in.getState().getPhase());
  s.pending_jobs = decode_strings(in.getPendingJobs());
  s.running_jobs = decode_strings(in.getRunningJobs());
  s.completed_jobs = decode_strings(in.getCompletedJobs());
  s.failed_jobs = decode_strings(in.getFailedJobs());
  s.terminated_jobs = decode_strings(in.getTerminatedJobs());
  s.unknown_jobs = decode_strings(in.getUnknownJobs());
  s.reason = str(in.getState().getReason());
  s.message = str(in.getState().getMessage());
  s.last_transition_ms = in.getState().getLastTransitionMs();
  for (auto j : in.getJobStatusList()) {
    FlowJobStatus out{str(j.getName()),
                      str(j.getUid()),
                      str(j.getState()),
                      j.getStartMs(),
                      j.getEndMs(),
                      j.getRestartCount(),
                      {}};
    for (auto h : j.getRunningHistories())
      out.running_histories.push_back({str(h.getState()), h.getStartMs(), h.getEndMs()});
    s.job_status_list.push_back(std::move(out));
  }
  for (auto c : in.getConditions())
    s.conditions[str(c.getJob())] = {str(c.getPhase()), c.getCreateMs(), c.getRunningDurationMs(),
                                     decode_task_counts(c.getTaskStatusCount())};
  return s;
}

void encode(const JobFlow& in, api::JobFlow::Builder out) {
  out.setUid(text(in.uid));
  out.setCreatedMs(in.created_ms);
  encode(in.spec, out.initSpec());
  encode(in.status, out.initStatus());
}

JobFlow decode(api::JobFlow::Reader in) {
  JobFlow f;
  f.uid = str(in.getUid());
  f.created_ms = in.getCreatedMs();
  Diagnostics ignored;  // our own data
  f.spec = decode(in.getSpec(), ignored);
  f.status = decode(in.getStatus());
  return f;
}

}  // namespace caldera
