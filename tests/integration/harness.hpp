// Test harness: real calderad processes on free loopback ports, the real caldera CLI, temp dirs.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace caldera::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs argv[0] with the arguments, optional stdin text; waits for it.
CommandResult run(const std::vector<std::string>& argv, const std::string& input = {});

// A unique directory under /tmp, removed (with any process still using it) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One calderad process with its data dir.
class Calderad {
 public:
  explicit Calderad(std::string data_dir, std::vector<std::string> extra_args = {});
  ~Calderad();  // stops it (SIGTERM, then SIGKILL)

  void start();                // and waits until it answers a ping
  void launch();               // starts it and returns: for a node that is not expected to answer
  void stop();                 // SIGTERM and wait
  void kill9();                // SIGKILL and wait
  void signal(int sig) const;  // e.g. SIGSTOP, SIGCONT
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  std::string log() const;  // what it printed

  // The caldera CLI against this node.
  CommandResult cli(std::vector<std::string> args, const std::string& input = {}) const;

 private:
  std::string data_dir_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Polls fn every few ms until it returns true or the timeout passes.
bool eventually(const std::function<bool()>& fn,
                std::chrono::milliseconds timeout = std::chrono::seconds(30));

std::string source_path(const std::string& relative);  // a file of the source tree
// A loopback TCP port (20000-31999) that was free a moment ago, never one this process was
// given before.
int free_port();
std::string write_file(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace caldera::testing
