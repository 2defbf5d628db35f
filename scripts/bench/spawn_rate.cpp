// The machine's raw spawn rate: a tight loop that starts a program and waits for it, the
// baseline a job runner is measured against (posix_spawn, as a careful launcher would).
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

extern char** environ;

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::string program = argc > 2 ? argv[2] : "/bin/true";
  if (n <= 0) {
    std::fprintf(stderr, "usage: caldera-bench-spawn [N=1000] [PROGRAM=/bin/true]\n");
    return 2;
  }
  char* args[] = {program.data(), nullptr};
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    pid_t pid;
    if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, args, environ) != 0) {
      std::perror("posix_spawn");
      return 1;
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "%s did not exit 0\n", program.c_str());
      return 1;
    }
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("spawns=%d spawn_s=%.3f spawns_per_s=%.1f\n", n, s, n / s);
  return 0;
}
