#include "harness.hpp"

#include "../proc_stat.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace caldera::testing {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The whole of a small /proc file, read with read(2): a process that exits while it is read
// fails the read (ESRCH), which libstdc++'s streams throw; such a file reads as empty.
std::string read_proc_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// Whether a process's command line or one of its open files names something under `dir`. A pod
// supervisor is forked by the node's launcher without an exec, so its command line is the
// launcher's; the node's log, which it inherits, is under the data dir.
bool uses_dir(const fs::path& proc, const std::string& dir) {
  if (read_proc_file(proc / "cmdline").find(dir) != std::string::npos) return true;
  std::error_code ec;
  for (fs::directory_iterator f(proc / "fd", ec), end; !ec && f != end; f.increment(ec)) {
    std::error_code link_ec;
    if (fs::read_symlink(f->path(), link_ec).string().find(dir) != std::string::npos) return true;
  }
  return false;
}

// Kills every process that uses `dir` (a test's calderad, its pod supervisors) and every
// descendant of one (the supervisors' containers); returns how many. A process forked after /proc
// was read escapes it: see kill_processes_using.
size_t kill_processes_using_once(const std::string& dir) {
  std::map<pid_t, pid_t> parent_of;
  std::set<pid_t> doomed;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    auto stat = parse_proc_stat(read_proc_file(it->path() / "stat"));
    if (!stat) continue;
    parent_of[pid] = stat->ppid;
    if (uses_dir(it->path(), dir)) doomed.insert(pid);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parent_of)
      if (doomed.count(ppid) && doomed.insert(pid).second) grew = true;
  }
  for (pid_t pid : doomed) ::kill(pid, SIGKILL);
  return doomed.size();
}

// Until a pass finds nothing, so that no pod of a test outlives it (a supervisor may be forking
// its container while the first pass reads /proc).
void kill_processes_using(const std::string& dir) {
  for (int pass = 0; pass < 5 && kill_processes_using_once(dir) > 0; ++pass) {
  }
}

constexpr std::chrono::seconds kRunTimeout{120};

}  // namespace

CommandResult run(const std::vector<std::string>& argv, const std::string& input) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::thread writer([&] {
    // A command that exits without reading all its input must not kill the test with SIGPIPE:
    // blocked in this thread, the write fails with EPIPE instead, and the signal it leaves
    // pending here is taken back.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    size_t off = 0;
    while (off < input.size()) {
      auto n = write(in_pipe[1], input.data() + off, input.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(in_pipe[1]);
    timespec now{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  });
  CommandResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  // A command that should have ended long ago (a calderad that starts when it should refuse its
  // flags) is killed, and the test fails on its exit status instead of waiting for ctest's timeout.
  auto deadline = std::chrono::steady_clock::now() + kRunTimeout;
  bool killed = false;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    int ready = poll(fds, 2, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (ready < 0) break;
    if (ready == 0) {
      if (killed) break;  // a process it started holds the pipes open: stop reading them
      ::kill(pid, SIGKILL);
      killed = true;
      r.err += "\n[harness: killed after " + std::to_string(kRunTimeout.count()) + " s]\n";
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      auto n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        sinks[i]->append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  writer.join();
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "caldera-it-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  kill_processes_using(path_);
  std::error_code ec;
  fs::remove_all(path_, ec);
}

Calderad::Calderad(std::string data_dir, std::vector<std::string> extra_args)
    : data_dir_(std::move(data_dir)), extra_args_(std::move(extra_args)) {}

Calderad::~Calderad() {
  if (pid_ > 0) stop();
}

void Calderad::launch() {
  auto port_file = data_dir_ + "/calderad.port";
  fs::create_directories(data_dir_);
  fs::remove(port_file);
  std::vector<std::string> argv{CALDERAD_PATH, "--port",  "0",           "--cluster-port", "0",
                                "--data-dir",  data_dir_, "--port-file", port_file};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  pid_ = fork();
  if (pid_ == 0) {
    int log = open((data_dir_ + "/calderad.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(log, 1);
    dup2(log, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

void Calderad::start() {
  launch();
  auto port_file = data_dir_ + "/calderad.port";
  bool up = eventually(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          throw std::runtime_error("calderad exited at start:\n" + log());
        }
        auto text = slurp(port_file);
        if (text.empty()) return false;
        port_ = std::stoi(text);
        return cli({"get", "nodes"}).exit_code == 0;
      },
      20s);
  if (!up) throw std::runtime_error("calderad did not come up:\n" + log());
}

void Calderad::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  bool gone = eventually([&] { return waitpid(pid_, nullptr, WNOHANG) == pid_; }, 10s);
  if (!gone) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

void Calderad::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void Calderad::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

// Below the kernel's ephemeral range (32768 and up here): a port from bind(0) is also what an
// outgoing connection of another test may take before our node listens on it.
int free_port() {
  static std::mt19937 random(static_cast<unsigned>(::getpid()) ^
                             static_cast<unsigned>(std::random_device{}()));
  // A port handed out is free until its calderad binds it: the next pick must not be the same
  // one (two of a cluster's ports once were, and its config was refused).
  static std::set<int> given;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int port = 20000 + static_cast<int>(random() % 12000);
    if (given.count(port)) continue;
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (free) {
      given.insert(port);
      return port;
    }
  }
  throw std::runtime_error("no free port");
}

std::string Calderad::log() const {
  return slurp(data_dir_ + "/calderad.log");
}

CommandResult Calderad::cli(std::vector<std::string> args, const std::string& input) const {
  args.insert(args.begin(), {CALDERA_CLI_PATH, "--server", server()});
  return run(args, input);
}

bool eventually(const std::function<bool()>& fn, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = 5ms;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
  return fn();
}

std::string source_path(const std::string& relative) {
  return std::string(CALDERA_SOURCE_DIR) + "/" + relative;
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  auto path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace caldera::testing
