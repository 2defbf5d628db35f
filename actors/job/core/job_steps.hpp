// The job controller's building blocks, shared by its entry points (job_controller.cpp) and its
// phases (job_phases.cpp). Internal to actors/job/core.
#pragma once

#include <string>

#include "actors/job/core/delayed_action.hpp"
#include "actors/job/core/job_controller.hpp"
#include "actors/job/core/policy.hpp"

namespace caldera {

// The pods an action touches: all of the job's, or one task's, pod's or partition's.
struct Target {
  ActionLevel level = ActionLevel::Job;
  std::string task;
  std::string pod_name;
  int32_t partition = -1;
};

// One action to execute in the job's current phase (Volcano's state.Execute(action)).
struct Step {
  Action action = Action::SyncJob;
  Target target;
  std::string reason;  // why: becomes state.reason when the action moves the phase
  std::string message;
  bool by_user = false;  // a client command: it never consumes the job's retries
};

// Runs `step` in the current phase, then syncs while the phase keeps moving, so that one event
// can pass several arrows (each with its condition), and recounts the status.
void execute(JobModel& m, const Step& step, const Clock& clock, Effects& fx);

// Moves the job to phase `to` (an arrow of the state table): the state's reason and message, a
// condition, an event; a job that stops being active drops its delayed actions.
void set_phase(JobModel& m, JobPhase to, std::string reason, std::string message,
               const Clock& clock, Effects& fx);

// Stops a pod: marks it out of sync (killed by the controller); one sent to its node is killed
// there, one never sent ends here at once (Failed, Killed) and lets its reservation go.
void kill_pod(JobModel& m, PodTable::const_iterator it, const std::string& why, const Clock& clock,
              Effects& fx);

// Whether the phase does anything with the action (section 3.4); elsewhere it is a no-op.
bool phase_takes(JobPhase phase, Action action);

// Appends to the job's event list (bounded), which `caldera describe job` shows.
void add_event(JobModel& m, const Clock& clock, std::string type, std::string reason,
               std::string message);

// Registers the delayed action a policy with a timeout asks for, unless the same one waits.
void schedule_delayed(JobModel& m, const EventRequest& req, const PolicyDecision& d,
                      const Clock& clock, Effects& fx);

// An event raised by one of the job's pods, before its policies are applied.
EventRequest request_for(const JobModel& m, const Pod& pod, Event event);

const TaskSpec* find_task(const JobSpec& spec, const std::string& name);

// The action's target for an event of this pod (job-wide when the event names no pod).
Target target_of(Action action, const std::string& task, const std::string& pod_name,
                 int32_t partition);

}  // namespace caldera
