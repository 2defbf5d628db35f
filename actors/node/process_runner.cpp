#include "actors/node/process_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <deque>
#include <filesystem>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <variant>

#include <spdlog/spdlog.h>

#include "actors/node/pod_dir.hpp"
#include "common/clock.hpp"

extern char** environ;

namespace caldera {
namespace {

namespace fs = std::filesystem;

// A plugin file may only be below the pod's directory, whatever the launch says.
std::optional<std::string> check_pod_file(const std::string& rel) {
  std::filesystem::path p(rel);
  bool inside = !rel.empty() && p.is_relative();
  for (const auto& part : p)
    if (part == "..") inside = false;
  if (!inside) return "plugin file path " + rel + " is not inside the pod directory";
  return std::nullopt;
}

// The ssh plugin's keys: ssh refuses a key others may read, so .ssh/ is the owner's alone.
bool is_private(const std::string& rel) {
  return rel.starts_with(".ssh/");
}

// Makes the directory a plugin file goes in (.ssh/ for the owner only).
std::error_code make_parent(const std::filesystem::path& full, const std::string& rel) {
  std::error_code ec;
  std::filesystem::create_directories(full.parent_path(), ec);
  if (!ec && is_private(rel))
    std::filesystem::permissions(full.parent_path(), std::filesystem::perms::owner_all, ec);
  return ec;
}

std::optional<std::string> write_pod_file(const std::string& pod_dir, const std::string& rel,
                                          const std::string& content) {
  auto full = std::filesystem::path(pod_dir) / rel;
  if (make_parent(full, rel) ||
      !pod_dir::write_file(full.string(), content, is_private(rel) ? 0600 : 0644))
    return "cannot write " + full.string();
  return std::nullopt;
}

// The shim gets its own grace period to escalate; the runner steps in only if the shim is stuck.
constexpr int64_t kShimSlackMs = 2000;

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
  std::vector<int32_t> pgids;  // the containers' process groups, once the shim said them
  int32_t pid = 0;
  uint64_t ticks = 0;
  bool finished = false;
  // Forked by the launcher: it ends when its record pipe does (the shim holds the only writing
  // end), and its pidfd comes in the launcher's answer.
  bool via_launcher = false;
  bool adopted = false;       // started by an earlier calderad: it surely ran
  bool awaiting_pid = false;  // the launcher has not answered yet (holds one of open_handles)
  bool orphaned = false;      // the launcher died before it answered: the record names the shim
  uint32_t launch_seq = 0;    // the number of its request to the launcher
  bool kill_requested = false;
  int64_t kill_grace_ms = 0;
  bool kill_overdue = false;  // the grace ran out before its pidfd came: SIGKILL on arrival
  int open_handles = 0;
  // Launched and adopted shims alike are watched and signalled through a pidfd, which cannot
  // come to name another process.
  int pidfd = -1;
  bool has_poll = false;
  uv_poll_t poll{};
  bool has_timer = false;
  uv_timer_t kill_timer{};
  // Launched pods: the shim's stdout, where it writes its record as it goes.
  bool has_pipe = false;
  bool pipe_open = false;
  uv_pipe_t out{};
  std::string record;  // what came through the pipe so far
  bool reported_running = false;
  std::string create_error;  // the pod could not be set up: nothing of it ran
  // An adopted shim whose state file was deleted under it (its data dir lost and restored from
  // a backup): the file as the shim still has it open, to learn how the pod ends.
  int state_fd = -1;

  ~SupervisedPod() {
    if (pidfd >= 0) ::close(pidfd);
    if (state_fd >= 0) ::close(state_fd);
  }
};

// The shim's state file: by its path, or through the descriptor kept of it once deleted.
std::optional<std::string> read_state(const SupervisedPod& pod) {
  if (pod.state_fd < 0) return pod_dir::read_file(pod.dir + "/state");
  std::string text;
  char buf[4096];
  for (off_t at = 0;;) {
    ssize_t n = ::pread(pod.state_fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

// A descriptor of `path` (deleted since) that process `pid` holds open, or -1: the file lives on
// while it is open, and /proc opens it again.
int open_deleted(int32_t pid, const std::string& path) {
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fds, ec)) {
    auto target = fs::read_symlink(entry.path(), ec);
    if (ec || target.string() != path + " (deleted)") continue;
    int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) return fd;
  }
  return -1;
}

// Closes the descriptors it holds unless released.
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
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
    // The launcher ends when its socket closes; the shims it made go on.
    if (launcher_sock_ >= 0) {
      ::close(launcher_sock_);
      ::waitpid(launcher_pid_, nullptr, 0);
    }
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
    if (stop) {
      std::deque<SupervisedPod*> awaiting;
      awaiting.swap(self->awaiting_);
      for (SupervisedPod* pod : awaiting) release_hold(pod);
      uv_walk(&self->loop_, &UvProcessRunner::close_for_shutdown, self);
    }
  }

  // Closing a handle neither kills nor forgets the shim: it keeps running and can be adopted.
  static void close_for_shutdown(uv_handle_t* handle, void* arg) {
    auto* self = static_cast<UvProcessRunner*>(arg);
    if (uv_is_closing(handle)) return;
    if (handle == reinterpret_cast<uv_handle_t*>(&self->async_)) {
      uv_close(handle, nullptr);
    } else if (handle == reinterpret_cast<uv_handle_t*>(self->launcher_poll_)) {
      uv_close(handle, [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
      self->launcher_poll_ = nullptr;
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
    int64_t now = system_now_ms();
    std::vector<ContainerStatus> out(pod.names.size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = ContainerStatus{pod.names[i], ContainerState::Terminated, exit_code, signal,
                               reason,       pod.started_ms[i],          now};
    return out;
  }

  // Takes in what the shim has recorded: who it is, its containers' groups and start times.
  static void learn(SupervisedPod& pod, const pod_dir::ShimState& st) {
    if (pod.pid == 0 && pod.via_launcher) pod.pid = st.shim_pid;
    if (st.shim_pid == pod.pid && st.shim_start_ticks != 0) pod.ticks = st.shim_start_ticks;
    // Its launcher died before it answered: the shim is found as an adopted one would be.
    if (pod.orphaned && pod.pidfd < 0 && pod.pid > 0 && pod.ticks != 0 && !pod.finished) {
      int fd = pidfd_open(pod.pid);
      if (fd >= 0 && pod_dir::proc_start_ticks(pod.pid) == pod.ticks) {
        pod.pidfd = fd;
        pod.runner->deliver_pending_kill(&pod);
      } else if (fd >= 0) {
        ::close(fd);
      }
    }
    if (st.running && st.started.size() == pod.names.size()) {
      pod.pgids.clear();
      for (size_t i = 0; i < st.started.size(); ++i) {
        pod.names[i] = st.started[i].name;
        pod.started_ms[i] = st.started[i].started_ms;
        pod.pgids.push_back(st.started[i].pgid);
      }
    }
  }

  // The shim's record of how its pod ended, from its pipe or else its state file.
  std::optional<std::vector<ContainerStatus>> recorded_statuses(SupervisedPod& pod) {
    auto st = pod_dir::parse_state(pod.record, pod.names.size());
    if (!st.ended) {
      auto text = read_state(pod);
      if (!text) return std::nullopt;
      st = pod_dir::parse_state(*text, pod.names.size());
    }
    learn(pod, st);
    return st.ended;
  }

  // The pod's story is over: report it and release its handles.
  void finish(SupervisedPod* pod, std::vector<ContainerStatus> statuses) {
    pod->finished = true;
    auto it = pods_.find(pod->uid);
    if (it != pods_.end() && it->second == pod) pods_.erase(it);
    if (pod->has_poll) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->poll));
    if (pod->has_timer) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->kill_timer));
    if (pod->has_pipe) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->out));
    report(*pod, std::move(statuses));
  }

  static void alloc_chunk(uv_handle_t* /*handle*/, size_t /*suggested*/, uv_buf_t* buf) {
    static char chunk[16 * 1024];  // only the loop thread reads; each read is copied at once
    *buf = uv_buf_init(chunk, sizeof chunk);
  }

  // The shim's record as it writes it: the pod is Running once every container was started.
  static void on_shim_output(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
    auto* pod = static_cast<SupervisedPod*>(stream->data);
    if (nread < 0) {
      pod->pipe_open = false;
      close_pod_handle(reinterpret_cast<uv_handle_t*>(stream));
      if (pod->via_launcher && !pod->finished) pod->runner->launcher_pod_ended(pod);
      return;
    }
    if (nread == 0 || pod->finished) return;
    pod->record.append(buf->base, static_cast<size_t>(nread));
    pod->runner->take_record(*pod);
  }

  void take_record(SupervisedPod& pod) {
    auto st = pod_dir::parse_state(pod.record, pod.names.size());
    learn(pod, st);
    if (st.running && !pod.reported_running) {
      pod.reported_running = true;
      report(pod, running_statuses(pod));
    }
  }

  // What is left in the pipe of a shim that ended: read now, as its end may be seen first.
  static void drain(SupervisedPod& pod) {
    if (!pod.pipe_open) return;
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(&pod.out), &fd) != 0) return;
    char chunk[16 * 1024];
    for (;;) {
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // EOF, or EAGAIN: a process the shim left behind holds the pipe
      pod.record.append(chunk, static_cast<size_t>(n));
    }
  }

  // Beyond the launcher's window a launch waits in the backlog, with nothing made for it yet.
  void do_launch(PodProcessSpec spec) {
    if (pods_.count(spec.uid) != 0 || backlog_index_.count(spec.uid) != 0) return;
    if ((launcher_sock_ >= 0 || !launcher_given_up_) && awaiting_.size() >= kLauncherWindow) {
      std::string uid = spec.uid;  // the insert below moves spec first
      backlog_index_[uid] = backlog_.insert(backlog_.end(), std::move(spec));
      return;
    }
    start_pod(std::move(spec));
  }

  // The shim gets the spec on stdin from a memfd (no file in the pod dir to make and remove) and
  // its record pipe as stdout; the launcher forks it, or else it is spawned.
  void start_pod(PodProcessSpec spec) {
    auto* pod = new SupervisedPod;
    pod->runner = this;
    pod->uid = spec.uid;
    pod->dir = spec.pod_dir;
    for (const auto& c : spec.containers) pod->names.push_back(c.name);
    pod->started_ms.assign(pod->names.size(), system_now_ms());

    // A spec the node cannot run fails the pod (every new one would fail the same way); the
    // node failing to set it up is a failed creation, which may well succeed later.
    std::optional<std::string> problem = pod_dir::check_containers(spec.containers);
    for (const auto& [path, content] : spec.files)
      if (!problem) problem = check_pod_file(path);
    Fds fds;
    int out[2] = {-1, -1};
    int spec_fd = -1;
    if (!problem) {
      // The shim makes the pod dir; plugin files need it first.
      if (!spec.files.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(spec.pod_dir, ec);
        if (ec) pod->create_error = "cannot create pod dir " + spec.pod_dir + ": " + ec.message();
      }
      for (const auto& [path, content] : spec.files)
        if (pod->create_error.empty())
          pod->create_error = write_pod_file(spec.pod_dir, path, content).value_or("");
      if (pod->create_error.empty()) pod->create_error = make_spec_fd(spec, &spec_fd);
      fds.fds.push_back(spec_fd);
      if (pod->create_error.empty() && ::pipe2(out, O_CLOEXEC) != 0)
        pod->create_error = std::string("cannot make a pipe: ") + std::strerror(errno);
      fds.fds.push_back(out[1]);
      if (!pod->create_error.empty()) {
        if (out[0] >= 0) ::close(out[0]);
        problem = pod->create_error;
      }
    }
    if (problem) {
      report(*pod, ended_without_record(*pod, 127, 0, "StartError: " + *problem));
      delete pod;
      return;
    }

    std::string grace = std::to_string(std::max<int64_t>(spec.grace_ms, 0));
    std::string lease_grace = std::to_string(std::max<int64_t>(spec.lease_stop_grace_ms, 0));
    std::string log_max_bytes = std::to_string(std::max<int64_t>(spec.log_max_bytes, 1));
    std::string log_max_files = std::to_string(std::clamp<int32_t>(spec.log_max_files, 1, 1000));
    std::string open_files = std::to_string(spec.open_files_limit);
    std::string views;
    for (const auto& [target, source] : spec.views)
      views += (views.empty() ? "" : ",") + target + "=" + source;
    // The record pipe is watched before anything runs: no shim is ever unwatched.
    uv_pipe_init(&loop_, &pod->out, 0);
    pod->out.data = pod;
    pod->has_pipe = true;
    pod->open_handles = 1;
    if (uv_pipe_open(&pod->out, out[0]) != 0) {
      ::close(out[0]);
      pod->create_error = "cannot read the pod's supervisor";
      finish(pod, ended_without_record(*pod, 127, 0, "StartError: " + pod->create_error));
      return;
    }
    pod->pipe_open = true;
    if (ensure_launcher()) {
      pod->launch_seq = ++launch_seq_;
      if (send_to_launcher({std::to_string(pod->launch_seq), spec.pod_dir, grace, log_max_bytes,
                            log_max_files, open_files, spec.lease_file, lease_grace, views},
                           spec_fd, out[1])) {
        pod->via_launcher = true;
        pod->awaiting_pid = true;
        ++pod->open_handles;  // held until the launcher's answer
        awaiting_.push_back(pod);
        pods_.emplace(pod->uid, pod);
        uv_read_start(reinterpret_cast<uv_stream_t*>(&pod->out), &UvProcessRunner::alloc_chunk,
                      &UvProcessRunner::on_shim_output);
        return;
      }
    }
    char* args[] = {shim_path_.data(),      spec.pod_dir.data(),
                    grace.data(),           log_max_bytes.data(),
                    log_max_files.data(),   open_files.data(),
                    spec.lease_file.data(), lease_grace.data(),
                    views.data(),           nullptr};
    pid_t pid = 0;
    int rc = spawn(shim_path_, args, spec_fd, out[1], &pid);
    if (rc != 0) {
      pod->create_error = "cannot run " + shim_path_ + ": " + std::strerror(rc);
      finish(pod, ended_without_record(*pod, 127, 0, "StartError: " + pod->create_error));
      return;
    }
    pod->pid = pid;
    // Our unreaped child, so the pid is still its own even if it has ended already.
    pod->pidfd = pidfd_open(pid);
    if (pod->pidfd < 0 || uv_poll_init(&loop_, &pod->poll, pod->pidfd) != 0) {
      // Unwatched, it could not be told to stop: end it now. It is still reading its spec (it
      // makes its state file first), so nothing of the pod runs yet.
      int err = errno;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      pod->create_error = std::string("cannot watch the pod's supervisor: ") + std::strerror(err);
      finish(pod, ended_without_record(*pod, 127, 0, "StartError: " + pod->create_error));
      return;
    }
    pod->poll.data = pod;
    pod->has_poll = true;
    ++pod->open_handles;
    pods_.emplace(pod->uid, pod);
    uv_poll_start(&pod->poll, UV_READABLE, &UvProcessRunner::on_pidfd);
    uv_read_start(reinterpret_cast<uv_stream_t*>(&pod->out), &UvProcessRunner::alloc_chunk,
                  &UvProcessRunner::on_shim_output);
  }

  // posix_spawn, which does not copy calderad's address space the way fork() does: `in` as
  // stdin, `out` as stdout and stderr (-1: /dev/null). Its own session (a Ctrl-C at calderad's
  // terminal must reach neither the launcher nor the pods), no signal blocked and every one at
  // its default (calderad ignores SIGPIPE, the pods must not). Returns posix_spawn's error.
  static int spawn(const std::string& path, char* const args[], int in, int out, pid_t* pid) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
    for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
      if (out >= 0)
        posix_spawn_file_actions_adddup2(&actions, out, fd);
      else
        posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0);
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr,
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    int rc = posix_spawn(pid, path.c_str(), &actions, &attr, args, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
  }

  // A memfd holding the shim's spec, read from its start. Returns the problem, or "".
  static std::string make_spec_fd(const PodProcessSpec& spec, int* fd) {
    std::string bytes = pod_dir::encode_spec(spec.containers);
    *fd = ::memfd_create("caldera-spec", MFD_CLOEXEC);
    if (*fd < 0) return std::string("cannot make the spec's memfd: ") + std::strerror(errno);
    std::string_view rest = bytes;
    while (!rest.empty()) {
      ssize_t n = ::write(*fd, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::string("cannot write the spec's memfd: ") + std::strerror(errno);
      rest.remove_prefix(static_cast<size_t>(n));
    }
    if (::lseek(*fd, 0, SEEK_SET) != 0)
      return std::string("cannot rewind the spec's memfd: ") + std::strerror(errno);
    return "";
  }

  void do_adopt(const AdoptCmd& c) {
    if (pods_.count(c.uid) != 0) return;
    auto* pod = new SupervisedPod;
    pod->runner = this;
    pod->uid = c.uid;
    pod->dir = c.pod_dir;
    pod->pid = c.pid;
    pod->ticks = c.ticks;
    pod->adopted = true;
    pod->names.resize(c.container_count);
    pod->started_ms.assign(c.container_count, 0);
    if (auto text = pod_dir::read_file(c.pod_dir + "/state"))
      learn(*pod, pod_dir::parse_state(*text, c.container_count));
    pod->ticks = c.ticks;  // the node's record, which the pid was checked against

    // Open first, then check the start time: the pidfd then surely refers to the shim.
    pod->pidfd = c.pid > 0 ? pidfd_open(c.pid) : -1;
    bool alive = pod->pidfd >= 0 && c.ticks != 0 && pod_dir::proc_start_ticks(c.pid) == c.ticks;
    if (alive && !fs::exists(c.pod_dir + "/state")) {
      pod->state_fd = open_deleted(c.pid, c.pod_dir + "/state");
      if (pod->state_fd >= 0) {
        spdlog::warn(
            "pod={} its directory is gone; its supervisor (pid {}) still tells how it ends, "
            "its logs are lost",
            c.uid, c.pid);
        if (auto text = read_state(*pod))
          learn(*pod, pod_dir::parse_state(*text, c.container_count));
        // It waits after its pod's end for a reader of the file (ORPHAN_WAIT_MS in the shim):
        // this one holds it now.
        pidfd_send_signal(pod->pidfd, SIGUSR1, nullptr);
      }
    }
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

  // A spawned or adopted shim ended (its pidfd is readable); launcher-made ones end with their
  // record pipe.
  static void on_pidfd(uv_poll_t* poll, int /*status*/, int /*events*/) {
    auto* pod = static_cast<SupervisedPod*>(poll->data);
    if (pod->finished) return;
    uv_poll_stop(poll);
    int signal = reap(*pod);
    drain(*pod);
    pod->runner->pod_ended(pod, signal);
  }

  // Collects the shim's exit if this process is its parent (spawned, or made by a launcher while
  // calderad is a subreaper), through its pidfd: its pid may name another child by now. Returns
  // the signal it died of, or 0.
  static int reap(const SupervisedPod& pod) {
    if (pod.pidfd < 0) return 0;
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pod.pidfd), &info,
                 WEXITED | WNOHANG) != 0)
      return 0;
    return info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED ? info.si_status : 0;
  }

  // The shim has ended: its record says how the pod ended. Without one: a pod killed before its
  // containers started was Signaled; a shim that never claimed the pod set nothing up (a failed
  // creation, made again); one that claimed it and vanished lost the outcome. A shim that found
  // the pod claimed by another leaves it to that one, which is adopted while it lives.
  void pod_ended(SupervisedPod* pod, int signal) {
    std::string complaint = shim_complaint(*pod);
    bool claimed_elsewhere = complaint.find("claimed by another") != std::string::npos;
    if (claimed_elsewhere && adopt_claimant(pod)) return;
    auto st = pod_dir::parse_state(pod->record, pod->names.size());
    if (!claimed_elsewhere && !st.ended) {  // what the pipe had no room for is in the file
      if (auto text = read_state(*pod)) st = pod_dir::parse_state(*text, pod->names.size());
    }
    learn(*pod, st);
    bool claimed = pod->adopted || (st.shim_pid != 0 && (pod->pid == 0 || st.shim_pid == pod->pid));
    if (st.ended && !claimed_elsewhere) {
      finish(pod, std::move(*st.ended));
    } else if ((pod->kill_requested || signal == SIGTERM) && !st.running) {
      finish(pod, ended_without_record(*pod, 128 + SIGTERM, SIGTERM, "Signaled"));
    } else if (!claimed && !claimed_elsewhere) {
      pod->create_error = "the pod's supervisor could not set it up" + complaint;
      finish(pod, ended_without_record(*pod, 127, 0, "StartError: " + pod->create_error));
    } else {
      finish(pod, ended_without_record(*pod, 255, 0, "SupervisorLost"));
    }
  }

  // The pod was launched again while a shim still ran it (a restart raced with a launch its
  // launcher still had queued): that shim, if it is alive, is the pod's.
  bool adopt_claimant(SupervisedPod* pod) {
    auto text = read_state(*pod);
    auto st = pod_dir::parse_state(text ? *text : "", pod->names.size());
    if (st.shim_pid <= 0 || st.shim_start_ticks == 0 ||
        pod_dir::proc_start_ticks(st.shim_pid) != st.shim_start_ticks)
      return false;
    AdoptCmd adopt{pod->uid, pod->dir, pod->names.size(), st.shim_pid, st.shim_start_ticks};
    bool kill = pod->kill_requested;
    int64_t grace = pod->kill_grace_ms;
    pod->finished = true;  // silently: the adopted one reports
    pods_.erase(pod->uid);
    if (pod->has_poll) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->poll));
    if (pod->has_timer) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->kill_timer));
    if (pod->has_pipe) close_pod_handle(reinterpret_cast<uv_handle_t*>(&pod->out));
    do_adopt(adopt);
    if (kill) do_kill(adopt.uid, grace);
    return true;
  }

  // The shim's own lines on what went wrong ("caldera-shim: ..."), which share its pipe.
  static std::string shim_complaint(const SupervisedPod& pod) {
    std::string out;
    for (size_t at = pod.record.find("caldera-shim: "); at != std::string::npos;
         at = pod.record.find("caldera-shim: ", at + 1)) {
      size_t end = pod.record.find('\n', at);
      out += "; " + pod.record.substr(at, end == std::string::npos ? end : end - at);
    }
    return out;
  }

  // Through the pidfd: it names the shim even after its pid was freed and reused.
  void signal_shim(SupervisedPod* pod, int sig, int64_t grace_ms) {
    if (pod->pidfd >= 0) {
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
    auto waiting = backlog_index_.find(uid);
    if (waiting != backlog_index_.end()) {  // never started: it ends here
      SupervisedPod never;
      never.uid = uid;
      for (const auto& c : waiting->second->containers) never.names.push_back(c.name);
      never.started_ms.assign(never.names.size(), system_now_ms());
      backlog_.erase(waiting->second);
      backlog_index_.erase(waiting);
      report(never, ended_without_record(never, 128 + SIGTERM, SIGTERM, "Signaled"));
      return;
    }
    auto it = pods_.find(uid);
    if (it == pods_.end() || it->second->finished) return;
    SupervisedPod* pod = it->second;
    grace_ms = std::max<int64_t>(grace_ms, 0);
    // A shim whose pidfd is still to come gets the signal with it.
    pod->kill_requested = true;
    pod->kill_grace_ms = grace_ms;
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
    if (pod->pgids.empty())
      if (auto text = read_state(*pod)) learn(*pod, pod_dir::parse_state(*text, pod->names.size()));
    for (int32_t pgid : pod->pgids)
      if (pgid > 0 && ::getsid(pgid) == pod->pid) ::kill(-pgid, SIGKILL);
    if (pod->pidfd < 0) pod->kill_overdue = true;  // sent once its pidfd comes
    pod->runner->signal_shim(pod, SIGKILL, 0);
  }

  // A pidfd came for a pod that was told to stop meanwhile.
  void deliver_pending_kill(SupervisedPod* pod) {
    if (pod->kill_requested) signal_shim(pod, SIGTERM, pod->kill_grace_ms);
    if (pod->kill_overdue) signal_shim(pod, SIGKILL, 0);
  }

  // ---- the launcher ----
  // Shims are forked by a small long-lived launcher (caldera-shim --launcher), so that each costs
  // the fork of a small process instead of an exec: a program's start (the dynamic loader, libc's
  // CPU probing, which in a VM traps on every cpuid) was most of a short pod's cost.
  // posix_spawn of the shim is the fallback when there is no launcher.

  // At most this many requests await an answer, so that neither side's socket buffer can fill
  // and block the other; the rest wait in the backlog, with no descriptors made for them yet.
  static constexpr size_t kLauncherWindow = 64;

  bool ensure_launcher() {
    if (launcher_sock_ >= 0) return true;
    if (launcher_given_up_) return false;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      give_up_launcher(std::string("cannot make its socket: ") + std::strerror(errno));
      return false;
    }
    std::string flag = "--launcher";
    char* args[] = {shim_path_.data(), flag.data(), nullptr};
    pid_t pid = 0;
    int rc = spawn(shim_path_, args, sv[1], -1, &pid);
    ::close(sv[1]);
    if (rc != 0) {
      ::close(sv[0]);
      give_up_launcher("cannot run " + shim_path_ + ": " + std::strerror(rc));
      return false;
    }
    auto* poll = new uv_poll_t;
    if (uv_poll_init(&loop_, poll, sv[0]) != 0) {
      delete poll;
      ::close(sv[0]);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      give_up_launcher("cannot watch its socket");
      return false;
    }
    poll->data = this;
    uv_poll_start(poll, UV_READABLE, &UvProcessRunner::on_launcher_readable);
    launcher_poll_ = poll;
    launcher_sock_ = sv[0];
    launcher_pid_ = pid;
    launcher_started_ms_ = system_now_ms();
    return true;
  }

  void give_up_launcher(const std::string& why) {
    launcher_given_up_ = true;
    spdlog::warn("process runner: no shim launcher ({}); each shim is started with posix_spawn",
                 why);
  }

  bool send_to_launcher(const std::vector<std::string>& args, int spec_fd, int out_fd) {
    std::string text;
    for (const auto& a : args) {
      text += a;
      text.push_back('\0');
    }
    int fds[2] = {spec_fd, out_fd};
    union {
      cmsghdr hdr;
      char space[CMSG_SPACE(sizeof fds)];
    } control{};
    iovec iov{text.data(), text.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.space;
    msg.msg_controllen = sizeof control.space;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(c), fds, sizeof fds);
    ssize_t n;
    do n = ::sendmsg(launcher_sock_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(text.size())) return true;
    // Gone (EPIPE), or not reading (EAGAIN, which the window rules out for a live one).
    launcher_dead(n < 0 ? std::strerror(errno) : "a short write");
    return false;
  }

  static void on_launcher_readable(uv_poll_t* handle, int status, int /*events*/) {
    auto* self = static_cast<UvProcessRunner*>(handle->data);
    // Answers already queued are taken even when the socket broke after them.
    for (;;) {
      int32_t answer[2] = {0, 0};  // the request's number, the pid (negative: -errno)
      union {
        cmsghdr hdr;
        char space[CMSG_SPACE(sizeof(int))];
      } control{};
      iovec iov{answer, sizeof answer};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control.space;
      msg.msg_controllen = sizeof control.space;
      ssize_t n = ::recvmsg(self->launcher_sock_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        if (status < 0) {
          self->launcher_dead(uv_strerror(status));
          return;
        }
        break;
      }
      int fd = -1;
      cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&msg) : nullptr;
      if (c != nullptr && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      bool in_turn = n == static_cast<ssize_t>(sizeof answer) && !self->awaiting_.empty() &&
                     static_cast<uint32_t>(answer[0]) == self->awaiting_.front()->launch_seq;
      if (!in_turn) {
        if (fd >= 0) ::close(fd);
        self->launcher_dead(n == 0  ? "it exited"
                            : n < 0 ? std::strerror(errno)
                                    : "an answer out of turn");
        return;
      }
      SupervisedPod* pod = self->awaiting_.front();
      self->awaiting_.pop_front();
      pod->awaiting_pid = false;
      int32_t pid = answer[1];
      bool cannot_fork = false;
      if (pid > 0 && !pod->finished) {
        pod->pid = pid;
        if (fd >= 0) {
          pod->pidfd = fd;
          self->deliver_pending_kill(pod);
        } else {  // no room for the descriptor (MSG_CTRUNC): found as an orphan is
          pod->orphaned = true;
          learn(*pod, pod_dir::parse_state(pod->record, pod->names.size()));
        }
      } else {
        if (fd >= 0) ::close(fd);
        if (pid <= 0 && !pod->finished) {
          int err = pid < 0 ? -pid : EIO;
          pod->create_error =
              std::string("cannot start the pod's supervisor: ") + std::strerror(err);
          self->finish(
              pod, self->ended_without_record(*pod, 127, 0, "StartError: " + pod->create_error));
          cannot_fork = err == ENOSYS || err == EPERM || err == EINVAL;
        }
      }
      release_hold(pod);
      if (cannot_fork) {
        // A launcher that cannot fork (a seccomp filter, say) would fail every pod: spawn them.
        self->give_up_launcher("it cannot fork");
        self->launcher_dead("it cannot fork");
        return;
      }
    }
    self->pump_backlog();
  }

  // The hold that an awaited answer keeps on a pod: it may have ended meanwhile.
  static void release_hold(SupervisedPod* pod) {
    if (--pod->open_handles == 0) delete pod;
  }

  void launcher_dead(const std::string& why) {
    if (launcher_sock_ < 0) return;
    uv_poll_stop(launcher_poll_);
    uv_close(reinterpret_cast<uv_handle_t*>(launcher_poll_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
    launcher_poll_ = nullptr;
    ::close(launcher_sock_);
    launcher_sock_ = -1;
    ::kill(launcher_pid_, SIGKILL);  // if it only misbehaved; its shims are not touched
    ::waitpid(launcher_pid_, nullptr, 0);
    bool young = system_now_ms() - launcher_started_ms_ < 1000;
    spdlog::error("process runner: the shim launcher went away ({}); {} pods were waiting for it",
                  why, awaiting_.size());
    // Each shim it made has said (or will say) who it is on its record pipe first.
    std::deque<SupervisedPod*> orphans;
    orphans.swap(awaiting_);
    for (SupervisedPod* pod : orphans) {
      pod->awaiting_pid = false;
      pod->orphaned = true;
      if (!pod->finished) learn(*pod, pod_dir::parse_state(pod->record, pod->names.size()));
      release_hold(pod);
    }
    if (young) give_up_launcher("it ended within a second of its start");
    pump_backlog();
  }

  void pump_backlog() {
    while (!backlog_.empty() &&
           (awaiting_.size() < kLauncherWindow || (launcher_sock_ < 0 && launcher_given_up_))) {
      PodProcessSpec spec = std::move(backlog_.front());
      backlog_index_.erase(spec.uid);
      backlog_.pop_front();
      start_pod(std::move(spec));
    }
  }

  // A launcher's shim closed its record pipe: it has ended.
  void launcher_pod_ended(SupervisedPod* pod) { pod_ended(pod, reap(*pod)); }

  std::string shim_path_;
  OnChange on_change_;
  uv_loop_t loop_{};
  uv_async_t async_{};
  std::thread thread_;
  std::mutex mutex_;
  std::deque<Command> queue_;                             // guarded by mutex_
  bool stopping_ = false;                                 // guarded by mutex_
  std::unordered_map<std::string, SupervisedPod*> pods_;  // loop thread only; pods still running
  // The launcher and what waits for it (loop thread only).
  int launcher_sock_ = -1;
  pid_t launcher_pid_ = 0;
  uv_poll_t* launcher_poll_ = nullptr;
  int64_t launcher_started_ms_ = 0;
  bool launcher_given_up_ = false;
  std::deque<SupervisedPod*> awaiting_;  // sent to the launcher, in order, not yet answered
  uint32_t launch_seq_ = 0;              // the last request's number
  std::list<PodProcessSpec> backlog_;    // beyond the window: not started yet
  std::unordered_map<std::string, std::list<PodProcessSpec>::iterator> backlog_index_;
};

}  // namespace

std::optional<std::string> replace_pod_file(const std::string& pod_dir, const std::string& rel,
                                            const std::string& content) {
  if (auto bad = check_pod_file(rel)) return bad;
  auto full = std::filesystem::path(pod_dir) / rel;
  auto aside = full.string() + ".new";
  if (make_parent(full, rel) || !pod_dir::write_file(aside, content, is_private(rel) ? 0600 : 0644))
    return "cannot write " + aside;
  std::error_code ec;
  std::filesystem::rename(aside, full, ec);
  if (ec) return "cannot replace " + full.string() + ": " + ec.message();
  return std::nullopt;
}

std::string probe_views(const std::string& shim_path, const std::string& scratch_dir) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    return std::string("cannot make a pipe: ") + std::strerror(errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string path = shim_path, flag = "--probe-views", dir = scratch_dir;
  char* args[] = {path.data(), flag.data(), dir.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, args, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string said;
  if (rc == 0) {
    char buf[512];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      said.append(buf, static_cast<size_t>(n));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(out[0]);
  // Its probe's pod dir, overlay work dir included, goes with it.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(scratch_dir, ec))
    if (entry.path().filename().string().rfind("probe-", 0) == 0)
      std::filesystem::remove_all(entry.path(), ec);
  if (rc != 0) return "cannot run " + shim_path + ": " + std::strerror(rc);
  while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
  if (said == "ok") return "";
  return said.empty() ? "the probe said nothing" : said;
}

std::unique_ptr<ProcessRunner> ProcessRunner::create(std::string shim_path, OnChange on_change) {
  auto runner = std::make_unique<UvProcessRunner>(std::move(shim_path), std::move(on_change));
  if (!runner->start()) return nullptr;
  return runner;
}

}  // namespace caldera
