#include "actors/node/process_runner.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <variant>

#include "actors/node/pod_dir.hpp"

namespace caldera {
namespace {

// A plugin file may only be below the pod's directory, whatever the launch says.
std::optional<std::string> check_pod_file(const std::string& rel) {
  std::filesystem::path p(rel);
  bool inside = !rel.empty() && p.is_relative();
  for (const auto& part : p)
    if (part == "..") inside = false;
  if (!inside) return "plugin file path " + rel + " is not inside the pod directory";
  return std::nullopt;
}

std::optional<std::string> write_pod_file(const std::string& pod_dir, const std::string& rel,
                                          const std::string& content) {
  auto full = std::filesystem::path(pod_dir) / rel;
  std::error_code ec;
  std::filesystem::create_directories(full.parent_path(), ec);
  if (ec || !pod_dir::write_file(full.string(), content)) return "cannot write " + full.string();
  return std::nullopt;
}

// The shim gets its own grace period to escalate; the runner steps in only if the shim is stuck.
constexpr int64_t kShimSlackMs = 2000;

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Raw syscalls: glibc 2.36's <sys/pidfd.h> lacks C++ linkage guards.
int pidfd_open(int32_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}
int pidfd_send_signal(int pidfd, int sig, siginfo_t* info) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, info, 0));
}

int clamp_ms(int64_t ms) {
  return static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
}

struct LaunchCmd {
  PodProcessSpec spec;
};
struct KillCmd {
  std::string uid;
  int64_t grace_ms;
};
struct AdoptCmd {
  std::string uid;
  std::string pod_dir;
  size_t container_count;
  int32_t pid;
  uint64_t ticks;
};
using Command = std::variant<LaunchCmd, KillCmd, AdoptCmd>;

class UvProcessRunner;

// One supervised pod. It owns uv handles, so it is freed only when the last one has closed.
struct SupervisedPod {
  UvProcessRunner* runner = nullptr;
  std::string uid;
  std::string dir;
  std::vector<std::string> names;
  std::vector<int64_t> started_ms;
  int32_t pid = 0;
  uint64_t ticks = 0;
  bool finished = false;
  int open_handles = 0;
  // Launched pods: the shim is our child. Adopted ones: watched through a pidfd.
  bool has_process = false;
  uv_process_t process{};
  int pidfd = -1;
  bool has_poll = false;
  uv_poll_t poll{};
  bool has_timer = false;
  uv_timer_t kill_timer{};
  // Launched pods: the shim's stdout, where it says once that its containers have started.
  bool has_pipe = false;
  uv_pipe_t out{};
  bool reported_running = false;
  std::string create_error;  // the pod could not be set up: nothing of it ran

  ~SupervisedPod() {
    if (pidfd >= 0) ::close(pidfd);
  }
};

class UvProcessRunner final : public ProcessRunner {
 public:
  UvProcessRunner(std::string shim_path, OnChange on_change)
      : shim_path_(std::move(shim_path)), on_change_(std::move(on_change)) {}

  bool start() {
    if (uv_loop_init(&loop_) != 0) return false;
    if (uv_async_init(&loop_, &async_, &UvProcessRunner::on_async) != 0) {
      uv_loop_close(&loop_);
      return false;
    }
    async_.data = this;
    thread_ = std::thread([this] {
      uv_run(&loop_, UV_RUN_DEFAULT);
      uv_loop_close(&loop_);
    });
    return true;
  }

  ~UvProcessRunner() override {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    uv_async_send(&async_);
    thread_.join();
  }

  void launch(PodProcessSpec spec) override { enqueue(LaunchCmd{std::move(spec)}); }
  void kill(const std::string& uid, int64_t grace_ms) override { enqueue(KillCmd{uid, grace_ms}); }
  void adopt(const std::string& uid, const std::string& pod_dir, size_t container_count,
             int32_t shim_pid, uint64_t shim_start_ticks) override {
    enqueue(AdoptCmd{uid, pod_dir, container_count, shim_pid, shim_start_ticks});
  }

 private:
  void enqueue(Command cmd) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      queue_.push_back(std::move(cmd));
    }
    uv_async_send(&async_);
  }

  // ---- loop thread ----

  static void on_async(uv_async_t* handle) {
    auto* self = static_cast<UvProcessRunner*>(handle->data);
    // uv_async_send coalesces: drain everything queued so far.
    std::deque<Command> batch;
    bool stop;
    {
      std::lock_guard lock(self->mutex_);
      batch.swap(self->queue_);
      stop = self->stopping_;
    }
    for (auto& cmd : batch) {
      std::visit(
          [self](auto& c) {
            using T = std::decay_t<decltype(c)>;
            if constexpr (std::is_same_v<T, LaunchCmd>) self->do_launch(std::move(c.spec));
            if constexpr (std::is_same_v<T, KillCmd>) self->do_kill(c.uid, c.grace_ms);
            if constexpr (std::is_same_v<T, AdoptCmd>) self->do_adopt(c);
          },
          cmd);
    }
    if (stop) uv_walk(&self->loop_, &UvProcessRunner::close_for_shutdown, self);
  }

  // Closing a handle neither kills nor forgets the shim: it keeps running and can be adopted.
  static void close_for_shutdown(uv_handle_t* handle, void* arg) {
    auto* self = static_cast<UvProcessRunner*>(arg);
    if (uv_is_closing(handle)) return;
    if (handle == reinterpret_cast<uv_handle_t*>(&self->async_)) {
      uv_close(handle, nullptr);
    } else {
      uv_close(handle, &UvProcessRunner::on_pod_handle_closed);
    }
  }

  static void on_pod_handle_closed(uv_handle_t* handle) {
    auto* pod = static_cast<SupervisedPod*>(handle->data);
    if (--pod->open_handles == 0) delete pod;
  }

  static void close_pod_handle(uv_handle_t* handle) {
    if (!uv_is_closing(handle)) uv_close(handle, &UvProcessRunner::on_pod_handle_closed);
  }

  void report(const SupervisedPod& pod, std::vector<ContainerStatus> containers) {
    if (on_change_)
      on_change_(
          PodProcessStatus{pod.uid, std::move(containers), pod.pid, pod.ticks, pod.create_error});
  }

  std::vector<ContainerStatus> running_statuses(const SupervisedPod& pod) const {
    std::vector<ContainerStatus> out(pod.names.size());
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].name = pod.names[i];
      out[i].state = ContainerState::Running;
      out[i].started_ms = pod.started_ms[i];
    }
    return out;
  }

  // Every container ended without a record of how: the shim is gone, or it never ran them.
  std::vector<ContainerStatus> ended_without_record(const SupervisedPod& pod, int32_t exit_code,
                                                    int32_t signal, const std::string& reason) {
    int64_t now = now_ms();
    std::vector<ContainerStatus> out(pod.names.size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = ContainerStatus{pod.names[i], ContainerState::Terminated, exit_code, signal,
                               reason,       pod.started_ms[i],          now};
    return out;
  }

  std::optional<std::vector<ContainerStatus>> recorded_statuses(const SupervisedPod& pod) {
    auto text = pod_dir::read_file(pod.dir + "/status");
    if (!text) return std::nullopt;
    return pod_dir::parse_status(*text, pod.names.size());
  }

  // The pod's story is over: report it and release its handles.
  void finish(SupervisedPod* pod, std::vector<ContainerStatus> statuses) {
    pod->finished = true;
    auto it = pods_.find(pod->uid);
    if (it != pods_.end() && it->second == pod) pods_.erase(it);
    if (pod->has_poll) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->poll));
    if (pod->has_timer) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->kill_timer));
    if (pod->has_process) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->process));
    if (pod->has_pipe) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->out));
    report(*pod, std::move(statuses));
  }

  static void alloc_line(uv_handle_t* /*handle*/, size_t /*suggested*/, uv_buf_t* buf) {
    static char line[64];  // only the loop thread reads, and the content is not needed
    *buf = uv_buf_init(line, sizeof line);
  }

  // The shim's "started" line: the pod is Running now, since when its record says.
  static void on_shim_output(uv_stream_t* stream, ssize_t nread, const uv_buf_t* /*buf*/) {
    auto* pod = static_cast<SupervisedPod*>(stream->data);
    if (nread < 0) {
      close_pod_handle(reinterpret_cast<uv_handle_t*>(stream));
      return;
    }
    if (nread == 0 || pod->finished || pod->reported_running) return;
    pod->reported_running = true;
    auto text = pod_dir::read_file(pod->dir + "/started");
    auto started = pod_dir::parse_started(text ? *text : "");
    if (started.size() == pod->names.size())
      for (size_t i = 0; i < started.size(); ++i) pod->started_ms[i] = started[i].second;
    pod->runner->report(*pod, pod->runner->running_statuses(*pod));
  }

  void do_launch(PodProcessSpec spec) {
    if (pods_.count(spec.uid) != 0) return;
    auto* pod = new SupervisedPod;
    pod->runner = this;
    pod->uid = spec.uid;
    pod->dir = spec.pod_dir;
    for (const auto& c : spec.containers) pod->names.push_back(c.name);
    pod->started_ms.assign(pod->names.size(), now_ms());

    // A spec the node cannot run fails the pod (every new one would fail the same way); the
    // node failing to set it up is a failed creation, which may well succeed later.
    std::optional<std::string> problem = pod_dir::check_containers(spec.containers);
    for (const auto& [path, content] : spec.files)
      if (!problem) problem = check_pod_file(path);
    if (!problem) {
      std::error_code ec;
      std::filesystem::create_directories(spec.pod_dir, ec);
      if (ec) {
        pod->create_error = "cannot create pod dir " + spec.pod_dir + ": " + ec.message();
      } else if (!pod_dir::write_file(spec.pod_dir + "/spec",
                                      pod_dir::encode_spec(spec.containers))) {
        pod->create_error = "cannot write " + spec.pod_dir + "/spec";
      }
      for (const auto& [path, content] : spec.files)
        if (pod->create_error.empty())
          pod->create_error = write_pod_file(spec.pod_dir, path, content).value_or("");
      if (!pod->create_error.empty()) problem = pod->create_error;
    }
    if (problem) {
      report(*pod, ended_without_record(*pod, 127, 0, "StartError: " + *problem));
      delete pod;
      return;
    }

    std::string grace = std::to_string(std::max<int64_t>(spec.grace_ms, 0));
    std::string log_max_bytes = std::to_string(std::max<int64_t>(spec.log_max_bytes, 1));
    std::string log_max_files = std::to_string(std::clamp<int32_t>(spec.log_max_files, 1, 1000));
    // Containers without a workingDir start in their pod's directory, where its files are.
    std::string open_files = std::to_string(spec.open_files_limit);
    char* args[] = {shim_path_.data(),    spec.pod_dir.data(), grace.data(), log_max_bytes.data(),
                    log_max_files.data(), open_files.data(),   nullptr};
    uv_stdio_container_t stdio[3];
    for (auto& s : stdio) s.flags = UV_IGNORE;
    uv_pipe_init(&loop_, &pod->out, 0);
    pod->out.data = pod;
    pod->has_pipe = true;
    stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&pod->out);
    uv_process_options_t options{};
    options.exit_cb = &UvProcessRunner::on_shim_exit;
    options.file = shim_path_.c_str();
    options.args = args;
    // Its own session: a Ctrl-C at calderad's terminal must not reach the pods.
    options.flags = UV_PROCESS_DETACHED;
    options.cwd = spec.pod_dir.c_str();
    options.stdio_count = 3;
    options.stdio = stdio;
    pod->process.data = pod;
    int rc = uv_spawn(&loop_, &pod->process, &options);
    // uv_spawn initialises the handle even when it fails, and it must be closed either way.
    pod->has_process = true;
    pod->open_handles = 2;  // the process and the pipe
    if (rc != 0) {
      pod->create_error = "cannot run " + shim_path_ + ": " + uv_strerror(rc);
      finish(pod, ended_without_record(*pod, 127, 0, "StartError: " + pod->create_error));
      return;
    }
    pod->pid = pod->process.pid;
    pod->ticks = pod_dir::proc_start_ticks(pod->pid).value_or(0);
    pods_.emplace(pod->uid, pod);
    uv_read_start(reinterpret_cast<uv_stream_t*>(&pod->out), &UvProcessRunner::alloc_line,
                  &UvProcessRunner::on_shim_output);
  }

  static void on_shim_exit(uv_process_t* process, int64_t /*exit_status*/, int term_signal) {
    auto* pod = static_cast<SupervisedPod*>(process->data);
    if (pod->finished) return;
    auto statuses = pod->runner->recorded_statuses(*pod);
    if (statuses) {
      pod->runner->finish(pod, std::move(*statuses));
    } else if (term_signal == SIGTERM) {
      // The shim handles SIGTERM from its first instruction on, so dying of it means it was
      // killed before it started any container.
      pod->runner->finish(
          pod, pod->runner->ended_without_record(*pod, 128 + SIGTERM, SIGTERM, "Signaled"));
    } else {
      pod->runner->finish(pod, pod->runner->ended_without_record(*pod, 255, 0, "SupervisorLost"));
    }
  }

  void do_adopt(const AdoptCmd& c) {
    if (pods_.count(c.uid) != 0) return;
    auto* pod = new SupervisedPod;
    pod->runner = this;
    pod->uid = c.uid;
    pod->dir = c.pod_dir;
    pod->pid = c.pid;
    pod->ticks = c.ticks;
    auto spec = pod_dir::read_file(c.pod_dir + "/spec");
    auto names = spec ? pod_dir::spec_names(*spec) : std::nullopt;
    auto started_text = pod_dir::read_file(c.pod_dir + "/started");
    auto started = pod_dir::parse_started(started_text ? *started_text : "");
    pod->names.resize(c.container_count);
    pod->started_ms.assign(c.container_count, 0);
    for (size_t i = 0; i < c.container_count; ++i) {
      if (names && names->size() == c.container_count) pod->names[i] = (*names)[i];
      if (started.size() == c.container_count) {
        pod->names[i] = started[i].first;
        pod->started_ms[i] = started[i].second;
      }
    }

    // Open first, then check the start time: the pidfd then surely refers to the shim.
    pod->pidfd = c.pid > 0 ? pidfd_open(c.pid) : -1;
    bool alive = pod->pidfd >= 0 && c.ticks != 0 && pod_dir::proc_start_ticks(c.pid) == c.ticks;
    if (!alive || uv_poll_init(&loop_, &pod->poll, pod->pidfd) != 0) {
      auto statuses = recorded_statuses(*pod);
      report(*pod, statuses ? std::move(*statuses)
                            : ended_without_record(*pod, 255, 0, "SupervisorLost"));
      delete pod;
      return;
    }
    pod->poll.data = pod;
    pod->has_poll = true;
    pod->open_handles = 1;
    pods_.emplace(pod->uid, pod);
    uv_poll_start(&pod->poll, UV_READABLE, &UvProcessRunner::on_pidfd);
    report(*pod, running_statuses(*pod));
  }

  static void on_pidfd(uv_poll_t* poll, int /*status*/, int /*events*/) {
    auto* pod = static_cast<SupervisedPod*>(poll->data);
    if (pod->finished) return;
    uv_poll_stop(poll);
    // Reaps it if this process happens to be its parent (a runner re-created in the same process).
    ::waitpid(pod->pid, nullptr, WNOHANG);
    auto statuses = pod->runner->recorded_statuses(*pod);
    pod->runner->finish(
        pod, statuses ? std::move(*statuses)
                      : pod->runner->ended_without_record(*pod, 255, 0, "SupervisorLost"));
  }

  // A launched shim is our unreaped child and an adopted one is held by its pidfd, so neither
  // signal can reach a process that merely reused the pid.
  void signal_shim(SupervisedPod* pod, int sig, int64_t grace_ms) {
    if (pod->has_process) {
      sigval value{};
      value.sival_int = clamp_ms(grace_ms);
      ::sigqueue(pod->pid, sig, value);
    } else if (pod->pidfd >= 0) {
      siginfo_t info{};
      info.si_signo = sig;
      info.si_code = SI_QUEUE;
      info.si_pid = ::getpid();
      info.si_uid = ::getuid();
      info.si_value.sival_int = clamp_ms(grace_ms);
      pidfd_send_signal(pod->pidfd, sig, &info);
    }
  }

  void do_kill(const std::string& uid, int64_t grace_ms) {
    auto it = pods_.find(uid);
    if (it == pods_.end() || it->second->finished) return;
    SupervisedPod* pod = it->second;
    grace_ms = std::max<int64_t>(grace_ms, 0);
    // The grace period rides along with the SIGTERM (sigqueue); the shim forwards and escalates.
    signal_shim(pod, SIGTERM, grace_ms);
    auto deadline = static_cast<uint64_t>(grace_ms + kShimSlackMs);
    if (!pod->has_timer) {
      uv_timer_init(&loop_, &pod->kill_timer);
      pod->kill_timer.data = pod;
      pod->has_timer = true;
      ++pod->open_handles;
    }
    if (!uv_is_active(reinterpret_cast<uv_handle_t*>(&pod->kill_timer)) ||
        uv_timer_get_due_in(&pod->kill_timer) > deadline)
      uv_timer_start(&pod->kill_timer, &UvProcessRunner::on_kill_deadline, deadline, 0);
  }

  // The shim did not end in time: end its containers' process groups and the shim itself.
  static void on_kill_deadline(uv_timer_t* timer) {
    auto* pod = static_cast<SupervisedPod*>(timer->data);
    if (pod->finished) return;
    // A group whose leader the shim reaped may be gone and its number reused: only groups still
    // in the shim's session are the pod's.
    if (auto pids = pod_dir::read_file(pod->dir + "/pids"))
      for (int32_t pgid : pod_dir::parse_pids(*pids))
        if (pgid > 0 && ::getsid(pgid) == pod->pid) ::kill(-pgid, SIGKILL);
    pod->runner->signal_shim(pod, SIGKILL, 0);
  }

  std::string shim_path_;
  OnChange on_change_;
  uv_loop_t loop_{};
  uv_async_t async_{};
  std::thread thread_;
  std::mutex mutex_;
  std::deque<Command> queue_;                             // guarded by mutex_
  bool stopping_ = false;                                 // guarded by mutex_
  std::unordered_map<std::string, SupervisedPod*> pods_;  // loop thread only; pods still running
};

}  // namespace

std::unique_ptr<ProcessRunner> ProcessRunner::create(std::string shim_path, OnChange on_change) {
  auto runner = std::make_unique<UvProcessRunner>(std::move(shim_path), std::move(on_change));
  if (!runner->start()) return nullptr;
  return runner;
}

}  // namespace caldera
