// A pod's stand-in service for probe tests: answers every HTTP request on 127.0.0.1:PORT with 503
// until READY_FILE exists, then with 200, and prints each request's first line and headers.
//   caldera-test-ready-server PORT READY_FILE
#include <cstdio>
#include <cstdlib>
#include <string>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT READY_FILE\n", argv[0]);
    return 2;
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[1])));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0) {
    std::perror("listen");
    return 1;
  }
  for (;;) {
    int c = ::accept(fd, nullptr, nullptr);
    if (c < 0) continue;
    char buf[4096];
    ssize_t n = ::recv(c, buf, sizeof buf - 1, 0);
    std::string request(buf, n > 0 ? static_cast<size_t>(n) : 0);
    std::printf("%s", request.substr(0, request.find("\r\n\r\n") + 2).c_str());
    std::fflush(stdout);
    struct stat st;
    const bool ready = ::stat(argv[2], &st) == 0;
    const char* reply = ready ? "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
                              : "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
    (void)::send(c, reply, std::char_traits<char>::length(reply), MSG_NOSIGNAL);
    ::close(c);
  }
}
