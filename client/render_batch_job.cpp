#include "client/render_batch_job.hpp"

#include <algorithm>
#include <array>
#include <ctime>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "client/render.hpp"
#include "messages/model/batch_job.hpp"

namespace caldera {
namespace {

using nlohmann::json;

// The label the API server selects a Job's pods by when the user gives no selector.
constexpr const char* kControllerUidLabel = "batch.kubernetes.io/controller-uid";

// ---- The API server's defaults (SetDefaults_Job), which kubectl shows ----

int32_t parallelism(const BatchJobFields& b) {
  return b.parallelism.value_or(1);
}

// With neither set, the API server makes the job one pod that must succeed once.
std::optional<int32_t> completions(const BatchJobFields& b) {
  if (!b.completions && !b.parallelism) return 1;
  return b.completions;
}

std::string completion_mode(const BatchJobFields& b) {
  return b.completion_mode.empty() ? "NonIndexed" : b.completion_mode;
}

// Unset under backoffLimitPerIndex means no job-wide limit, which the API server writes as
// MaxInt32.
int32_t backoff_limit(const BatchJobFields& b) {
  if (b.backoff_limit) return *b.backoff_limit;
  return b.backoff_limit_per_index ? std::numeric_limits<int32_t>::max() : 6;
}

std::string pod_replacement_policy(const BatchJobFields& b) {
  if (!b.pod_replacement_policy.empty()) return b.pod_replacement_policy;
  return b.pod_failure_policy ? "Failed" : "TerminatingOrFailed";
}

// ---- JSON ----

void set_if_time(json& out, const char* key, int64_t ms) {
  if (ms > 0) out[key] = format_timestamp(ms);
}

json pod_failure_policy_to_json(const std::vector<PodFailurePolicyRule>& rules) {
  json out = json::array();
  for (const auto& r : rules) {
    // onPodConditions has no omitempty in batch/v1: an exit-code rule shows an empty list.
    json rule{{"action", r.action}, {"onPodConditions", json::array()}};
    if (const auto& codes = r.on_exit_codes) {
      json cj{{"operator", codes->op}, {"values", codes->values}};
      if (!codes->container_name.empty()) cj["containerName"] = codes->container_name;
      rule["onExitCodes"] = std::move(cj);
    }
    for (const auto& p : r.on_pod_conditions)
      rule["onPodConditions"].push_back({{"type", p.type}, {"status", p.status}});
    out.push_back(std::move(rule));
  }
  return {{"rules", std::move(out)}};
}

json success_policy_to_json(const std::vector<SuccessPolicyRule>& rules) {
  json out = json::array();
  for (const auto& r : rules) {
    json rule = json::object();
    if (r.succeeded_indexes) rule["succeededIndexes"] = *r.succeeded_indexes;
    if (r.succeeded_count) rule["succeededCount"] = *r.succeeded_count;
    out.push_back(std::move(rule));
  }
  return {{"rules", std::move(out)}};
}

json template_to_json(const PodTemplate& t) {
  json metadata = json::object();
  if (!t.labels.empty()) metadata["labels"] = t.labels;
  if (!t.annotations.empty()) metadata["annotations"] = t.annotations;
  json spec{{"containers", json::array()}};
  for (const auto& c : t.containers) spec["containers"].push_back(container_to_json(c));
  if (!t.restart_policy.empty()) spec["restartPolicy"] = t.restart_policy;
  if (!t.node_selector.empty()) spec["nodeSelector"] = t.node_selector;
  if (t.termination_grace_seconds)
    spec["terminationGracePeriodSeconds"] = *t.termination_grace_seconds;
  return {{"metadata", std::move(metadata)}, {"spec", std::move(spec)}};
}

json spec_to_json(const BatchJobSpec& s) {
  json j{{"parallelism", parallelism(s)},
         {"completionMode", completion_mode(s)},
         {"backoffLimit", backoff_limit(s)},
         {"suspend", s.suspend},
         {"podReplacementPolicy", pod_replacement_policy(s)},
         {"template", template_to_json(s.template_)}};
  if (!s.priority_class_name.empty())
    j["template"]["spec"]["priorityClassName"] = s.priority_class_name;
  if (auto c = completions(s)) j["completions"] = *c;
  if (s.backoff_limit_per_index) j["backoffLimitPerIndex"] = *s.backoff_limit_per_index;
  if (s.max_failed_indexes) j["maxFailedIndexes"] = *s.max_failed_indexes;
  if (s.active_deadline_seconds) j["activeDeadlineSeconds"] = *s.active_deadline_seconds;
  if (s.ttl_seconds_after_finished) j["ttlSecondsAfterFinished"] = *s.ttl_seconds_after_finished;
  if (s.pod_failure_policy)
    j["podFailurePolicy"] = pod_failure_policy_to_json(*s.pod_failure_policy);
  if (s.success_policy) j["successPolicy"] = success_policy_to_json(*s.success_policy);
  if (s.manual_selector) j["manualSelector"] = true;
  if (s.selector) j["selector"] = {{"matchLabels", json(*s.selector)}};
  return j;
}

json status_to_json(const BatchJobStatus& s, const BatchJobFields& spec) {
  // The plain counters are left out at 0; ready and terminating are pointers the controller
  // always sets, so the API server shows them at 0 too.
  json j{{"ready", s.ready},
         {"terminating", s.terminating},
         {"uncountedTerminatedPods", json::object()}};
  if (s.active != 0) j["active"] = s.active;
  if (s.succeeded != 0) j["succeeded"] = s.succeeded;
  if (s.failed != 0) j["failed"] = s.failed;
  set_if_time(j, "startTime", s.start_ms);
  set_if_time(j, "completionTime", s.completion_ms);
  if (!s.completed_indexes.empty()) j["completedIndexes"] = s.completed_indexes;
  // A pointer too, set ("" at first) for an Indexed job with backoffLimitPerIndex.
  if (!s.failed_indexes.empty() || (spec.indexed() && spec.backoff_limit_per_index))
    j["failedIndexes"] = s.failed_indexes;
  if (!s.conditions.empty()) {
    json list = json::array();
    for (const auto& c : s.conditions) {
      json cj{{"type", c.type}, {"status", c.status}};
      if (!c.reason.empty()) cj["reason"] = c.reason;
      if (!c.message.empty()) cj["message"] = c.message;
      set_if_time(cj, "lastProbeTime", c.last_probe_ms);
      set_if_time(cj, "lastTransitionTime", c.last_transition_ms);
      list.push_back(std::move(cj));
    }
    j["conditions"] = std::move(list);
  }
  return j;
}

// ---- Text ----

// Go's text/tabwriter as kubectl sets it up: a cell ends at a tab; a column is as wide as its
// widest cell plus `padding` over each run of adjacent lines that have a cell in it; the text
// after a line's last tab is not a cell and is not padded.
std::string tabwrite(std::string_view text, size_t padding) {
  std::vector<std::vector<std::string_view>> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    std::vector<std::string_view> cells;
    for (size_t start = 0;;) {
      const size_t tab = line.find('\t', start);
      cells.push_back(line.substr(start, tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    lines.push_back(std::move(cells));
  }
  std::vector<std::vector<size_t>> widths(lines.size());
  for (size_t col = 0;; ++col) {
    bool any = false;
    for (size_t i = 0; i < lines.size();) {
      if (lines[i].size() <= col + 1) {
        ++i;
        continue;
      }
      any = true;
      size_t end = i, width = 0;
      for (; end < lines.size() && lines[end].size() > col + 1; ++end)
        width = std::max(width, lines[end][col].size() + padding);
      for (; i < end; ++i) widths[i].push_back(width);
    }
    if (!any) break;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line;
    for (size_t j = 0; j < lines[i].size(); ++j) {
      line += lines[i][j];
      if (j + 1 < lines[i].size()) line.append(widths[i][j] - lines[i][j].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

// One line of tab-separated cells; a tab or newline in a value would break the columns.
std::string tabbed(const std::vector<std::string>& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += '\t';
    for (char ch : cells[i]) out += ch == '\t' || ch == '\n' ? ' ' : ch;
  }
  return out + '\n';
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string age_since(int64_t ms, int64_t now_ms) {
  return ms > 0 ? format_age(now_ms - ms) : "<unknown>";
}

// Go's time.RFC1123Z, which describe prints times in; caldera's are UTC.
std::string rfc1123z(int64_t ms) {
  static constexpr std::array<std::string_view, 7> kDays{"Sun", "Mon", "Tue", "Wed",
                                                         "Thu", "Fri", "Sat"};
  static constexpr std::array<std::string_view, 12> kMonths{
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{}, {:02} {} {:04} {:02}:{:02}:{:02} +0000", kDays[tm.tm_wday], tm.tm_mday,
                     kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// kubectl's STATUS: the terminal conditions, then the ones a job waits in.
std::string status_word(const BatchJobStatus& s) {
  if (has_true_condition(s, kJobComplete)) return "Complete";
  if (has_true_condition(s, kJobFailed)) return "Failed";
  if (has_true_condition(s, kJobSuspended)) return "Suspended";
  // Doomed, its pods still stopping: kubectl 1.30 says so rather than Running.
  if (has_true_condition(s, kJobFailureTarget)) return "FailureTarget";
  // Succeeded, its other pods still stopping (kubectl 1.31).
  if (has_true_condition(s, kJobSuccessCriteriaMet)) return "SuccessCriteriaMet";
  return "Running";
}

std::string completions_cell(const BatchJobFields& b, int32_t succeeded) {
  if (auto c = completions(b)) return fmt::format("{}/{}", succeeded, *c);
  if (parallelism(b) > 1) return fmt::format("{}/1 of {}", succeeded, parallelism(b));
  return fmt::format("{}/1", succeeded);
}

// kubectl's DURATION runs to completionTime, which only a Complete job has, else to now.
std::string duration_cell(const BatchJobStatus& s, int64_t now_ms) {
  if (s.start_ms <= 0) return "";
  return format_age((s.completion_ms > 0 ? s.completion_ms : now_ms) - s.start_ms);
}

// The selector the API server generates, and kubectl shows, unless the user wrote one.
std::string selector_text(const BatchJobSpec& s, const std::string& uid) {
  if (!s.selector) return std::string(kControllerUidLabel) + "=" + uid;
  std::vector<std::string> parts;
  for (const auto& [k, v] : *s.selector) parts.push_back(k + "=" + v);
  return parts.empty() ? "<none>" : join(parts, ",");
}

// kubectl's printLabelsMultiline: a key per line, "<none>" without any.
std::string multiline(std::string_view title, const std::map<std::string, std::string>& m,
                      std::string_view sep) {
  std::string out = fmt::format("{}:\t", title);
  if (m.empty()) return out + "<none>\n";
  for (auto it = m.begin(); it != m.end(); ++it)
    out += fmt::format("{}{}{}{}\n", it == m.begin() ? "" : "\t", it->first, sep, it->second);
  return out;
}

// kubectl's capIndexesListOrNone: the list up to the first comma past 50 characters.
std::string capped_indexes(const std::string& indexes) {
  if (indexes.empty()) return "<none>";
  const size_t comma = indexes.find(',', 50);
  return comma == std::string::npos ? indexes : indexes.substr(0, comma + 1) + "...";
}

// kubectl's DescribePodTemplate, without what a caldera pod has none of (ports, mounts, volumes).
std::string pod_template_text(const PodTemplate& t) {
  std::string out = "Pod Template:\n" + multiline("  Labels", t.labels, "=");
  if (!t.annotations.empty()) out += multiline("  Annotations", t.annotations, ": ");
  out += "  Containers:\n";
  auto words = [&out](const char* title, const std::vector<std::string>& list) {
    if (list.empty()) return;
    out += fmt::format("    {}:\n", title);
    for (const auto& word : list) {
      std::string_view rest = word;
      for (size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1))
        out += fmt::format("      {}\n", rest.substr(0, nl));
      out += fmt::format("      {}\n", rest);
    }
  };
  auto resources = [&out](const char* title, const ResourceList& r) {
    if (r.values.empty()) return;
    out += fmt::format("    {}:\n", title);
    for (const auto& [k, v] : r.values)
      out += fmt::format("      {}:\t{}\n", k, format_quantity(v));
  };
  for (const auto& c : t.containers) {
    out += fmt::format("   {}:\n", c.name);
    if (!c.image.empty()) out += fmt::format("    Image:\t{}\n", c.image);
    words("Command", c.command);
    words("Args", c.args);
    resources("Limits", c.limits);
    resources("Requests", c.requests);
    out += c.env.empty() ? "    Environment:\t<none>\n" : "    Environment:\n";
    for (const auto& e : c.env) out += fmt::format("      {}:\t{}\n", e.name, e.value);
  }
  return out;
}

}  // namespace

nlohmann::json batch_job_to_json(const Job& job) {
  const BatchJobSpec spec = to_batch_job_spec(job.spec);
  json metadata{{"name", spec.name}, {"namespace", spec.namespace_}, {"uid", job.uid}};
  metadata["generation"] = job.spec.generation;
  set_if_time(metadata, "creationTimestamp", job.created_ms);
  if (!spec.labels.empty()) metadata["labels"] = spec.labels;
  if (!spec.annotations.empty()) metadata["annotations"] = spec.annotations;
  // Before the controller's first sync the API server shows an empty status.
  json status = job.status.batch ? status_to_json(*job.status.batch, spec) : json::object();
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", std::move(metadata)},
          {"spec", spec_to_json(spec)},
          {"status", std::move(status)}};
}

std::string batch_jobs_table(const std::vector<Job>& jobs, bool wide, int64_t now_ms,
                             bool namespaces) {
  if (jobs.empty()) return "No resources found.";
  std::vector<std::string> header{"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"};
  if (namespaces) header.insert(header.begin(), "NAMESPACE");
  if (wide) header.insert(header.end(), {"CONTAINERS", "IMAGES", "SELECTOR"});
  std::string text = tabbed(header);
  for (const auto& job : jobs) {
    const BatchJobSpec spec = to_batch_job_spec(job.spec);
    const BatchJobStatus st = job.status.batch.value_or(BatchJobStatus{});
    std::vector<std::string> row{spec.name, status_word(st), completions_cell(spec, st.succeeded),
                                 duration_cell(st, now_ms), age_since(job.created_ms, now_ms)};
    if (namespaces) row.insert(row.begin(), spec.namespace_);
    if (wide) {
      std::vector<std::string> names, images;
      for (const auto& c : spec.template_.containers) {
        names.push_back(c.name);
        images.push_back(c.image);
      }
      row.insert(row.end(), {join(names, ","), join(images, ","), selector_text(spec, job.uid)});
    }
    text += tabbed(row);
  }
  return tabwrite(text, 3);
}

std::string describe_batch_job(const Job& job, const std::vector<Pod>& pods, int64_t now_ms) {
  const BatchJobSpec spec = to_batch_job_spec(job.spec);
  const BatchJobStatus st = job.status.batch.value_or(BatchJobStatus{});
  const auto done = completions(spec);
  std::string text = fmt::format("Name:\t{}\nNamespace:\t{}\nSelector:\t{}\n", spec.name,
                                 spec.namespace_, selector_text(spec, job.uid));
  text += multiline("Labels", spec.labels, "=");
  text += multiline("Annotations", spec.annotations, ": ");
  text += fmt::format("Parallelism:\t{}\n", parallelism(spec));
  text += fmt::format("Completions:\t{}\n", done ? std::to_string(*done) : "<unset>");
  text += fmt::format("Completion Mode:\t{}\n", completion_mode(spec));
  text += fmt::format("Suspend:\t{}\n", spec.suspend);
  text += fmt::format("Backoff Limit:\t{}\n", backoff_limit(spec));
  if (spec.ttl_seconds_after_finished)
    text += fmt::format("TTL Seconds After Finished:\t{}\n", *spec.ttl_seconds_after_finished);
  if (st.start_ms > 0) text += fmt::format("Start Time:\t{}\n", rfc1123z(st.start_ms));
  if (st.completion_ms > 0) text += fmt::format("Completed At:\t{}\n", rfc1123z(st.completion_ms));
  if (st.start_ms > 0 && st.completion_ms > 0)
    text += fmt::format("Duration:\t{}\n", format_age(st.completion_ms - st.start_ms));
  if (spec.active_deadline_seconds)
    text += fmt::format("Active Deadline Seconds:\t{}s\n", *spec.active_deadline_seconds);
  text += fmt::format("Pods Statuses:\t{} Active ({} Ready) / {} Succeeded / {} Failed\n",
                      st.active, st.ready, st.succeeded, st.failed);
  if (spec.indexed()) {
    text += fmt::format("Completed Indexes:\t{}\n", capped_indexes(st.completed_indexes));
    if (spec.backoff_limit_per_index || !st.failed_indexes.empty())
      text += fmt::format("Failed Indexes:\t{}\n", capped_indexes(st.failed_indexes));
  }
  text += pod_template_text(spec.template_);
  // Not in kubectl's describe (it leaves them to -o yaml), but why a job ended is what one asks.
  if (!st.conditions.empty()) {
    text += "Conditions:\n  Type\tStatus\tReason\n  ----\t------\t------\n";
    for (const auto& c : st.conditions)
      text += tabbed({"  " + c.type, c.status, c.reason.empty() ? "<none>" : c.reason});
  }
  std::string out = tabwrite(text, 2);

  // The pods and events as the Volcano describe_job lists them.
  out += "Pods:\n";
  if (pods.empty()) {
    out += "  <none>\n";
  } else {
    std::string rows = tabbed({"  NAME", "PHASE", "NODE"});
    for (const auto& p : pods)
      rows += tabbed(
          {"  " + p.name, std::string(to_string(p.phase)), p.node.empty() ? "<none>" : p.node});
    out += tabwrite(rows, 3);
  }
  out += "Events:\n";
  if (job.events.empty()) {
    out += "  <none>\n";
  } else {
    std::string rows = tabbed({"  TYPE", "REASON", "AGE", "MESSAGE"});
    for (const auto& e : job.events)
      rows += tabbed({"  " + e.type, e.reason, age_since(e.time_ms, now_ms), e.message});
    out += tabwrite(rows, 3);
  }
  return out;
}

}  // namespace caldera
