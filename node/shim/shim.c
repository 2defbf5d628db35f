/* caldera-shim: the per-pod supervisor. It runs a pod's containers, forwards SIGTERM with a
 * SIGKILL deadline, and records in the pod dir how each container ended, so that calderad may die
 * and a restarted calderad can still learn the outcome (like slurmstepd or containerd-shim).
 *
 * Usage: caldera-shim POD_DIR GRACE_MS [LOG_MAX_BYTES LOG_MAX_FILES [NOFILE [LEASE_FILE
 *        [LEASE_GRACE_MS [VIEWS]]]]] < SPEC
 *        caldera-shim --launcher   (stdin: a SOCK_SEQPACKET socket from calderad)
 *        caldera-shim --probe-views DIR   (prints "ok", or why VIEWS cannot be shown here)
 *
 * VIEWS (absent or empty: none): TARGET=SOURCE[,TARGET=SOURCE...]: each SOURCE, a directory
 * relative to POD_DIR, is shown to the containers at TARGET, an absolute path such as
 * /etc/volcano, without touching the host: the shim takes a private mount namespace, lays an
 * overlay over TARGET's parent (its changes kept in POD_DIR/.views) and binds SOURCE on TARGET.
 * Where the machine refuses that, the containers run without the views and shim.err says why.
 *
 * As a launcher it makes shims without an exec each: per request (a sequence number and the eight
 * arguments above, NUL-terminated, with the spec's and the record pipe's descriptors attached)
 * it forks a child that runs as the shim of that pod, and answers with the sequence number, the
 * child's pid (negative: -errno) and a pidfd for it. It never waits for its children (the kernel
 * reaps them), and ends when calderad hangs up or an answer cannot be sent; shims outlive it as
 * they outlive calderad.
 *
 * SPEC, on stdin: NUL-terminated fields: "caldera-spec-1", container count, then per container:
 * name, working dir ("" = the pod dir), argc, argv..., envc, "K=V"...
 *
 * NOFILE: the soft RLIMIT_NOFILE containers start with (0 or absent: the shim's own). calderad
 * raises its own soft limit for client connections; containers get the one it was started with.
 *
 * LEASE_FILE (absent or empty: none): the node's lease, which its calderad renews while the
 * coordinator hears from it (see actors/node/lease_file.hpp): two copies of one deadline, in ms of
 * CLOCK_MONOTONIC. The pod may run only until the deadline: a shim that finds it past (calderad
 * dead, stopped, or cut off from the coordinator, which replaces the pod elsewhere once the lease
 * is over) stops its containers as a SIGTERM would, and records each container
 * that was running then (or never started) as ended with REASON LeaseExpired. The stop's grace
 * period is LEASE_GRACE_MS (absent: GRACE_MS up to 1 s, LEASE_STOP_GRACE_MS), the pod's own when
 * it sets one, as its replacement waits for it; a kill under way gets no longer than that. A
 * lease file that cannot be read counts as past. The shim reads it only when the deadline it knows
 * comes due.
 *
 * POD_DIR is made if missing (its parent must exist) and is the containers' default working dir.
 * Files are created sparingly, as each is an inode to allocate and later free, per pod:
 *   state     out: made exclusively, so one shim claims the pod, ever (exit 3 when it exists),
 *                  then only appended to, in whole lines:
 *                    shim PID START_TICKS           this supervisor (START_TICKS: field 22 of
 *                                                   /proc/PID/stat, tells the pid from a reuse)
 *                    start NAME PID STARTED_MS      per container, in spec order; PID = its
 *                                                   process group, 0 when it was not started
 *                    running                        every container was started (or failed to)
 *                    end NAME EXIT SIGNAL REASON STARTED_MS FINISHED_MS
 *                                                   per container; REASON is Completed, Error,
 *                                                   Signaled or StartError
 *                    done                           the record is complete
 *                  The same lines go to stdout, a pipe the node reads, whole lines at a time
 *                  and as it has room for them: the shim never waits for the node.
 *   NAME.log  out: the container's stdout and stderr, interleaved, made on its first output. The
 *                  shim copies them from a pipe and rotates like the kubelet
 *                  (containerLogMaxSize, containerLogMaxFiles): a write that would take NAME.log
 *                  past LOG_MAX_BYTES (default 10 MiB) renames it to NAME.log.1 (.1 to .2, ...;
 *                  beyond LOG_MAX_FILES - 1 the oldest goes, default 5 files in all) and continues
 *                  in a new NAME.log, cutting at a line end when there is one. A rotation that
 *                  fails (NAME.log.1 cannot be replaced) lets NAME.log grow past the size until
 *                  one works. Output it cannot write (disk full) is dropped, and a line says how
 *                  much once it can write again: a container never blocks on it.
 *   shim.err  out: why the shim gave up (exit 2: bad usage or spec; exit 1: cannot record), which
 *                  also goes to stderr
 *
 * Nothing is synced: the node records each pod's end durably as soon as it learns it, and a
 * machine that loses its page cache has lost the pod's processes too.
 *
 * A SIGTERM sent with sigqueue() carries the grace period in ms, overriding GRACE_MS. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

#define SPEC_MAGIC "caldera-spec-1"
#define MAX_SPEC_BYTES (64L * 1024 * 1024)
#define MAX_CONTAINERS 4096
#define MAX_NAME 200
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define DEFAULT_LOG_MAX_BYTES (10LL * 1024 * 1024)
#define DEFAULT_LOG_MAX_FILES 5
#define MAX_LOG_FILES 1000
/* After a pod's main processes ended, how long the shim waits for the end of their output: only
   a process that left the container's process group (setsid) can hold its pipe open longer. */
#define DRAIN_MS 1000
/* Without LEASE_GRACE_MS, a pod stopped because its node's lease ran out has at most this long
   between SIGTERM and SIGKILL (its own grace period if shorter) (kLeaseStopGraceMs in
   messages/pod.hpp). */
#define LEASE_STOP_GRACE_MS 1000
/* Grace periods travel in a sigqueue()'s int. */
#define MAX_GRACE_MS INT_MAX
/* A container's output is dropped rather than written into the last 5% of its disk: a log bomb
   fills neither the disk nor the node's store beside it, and the node still has room to work. */
#define DISK_RESERVE_PERCENT 5

/* One container's log: NAME.log and its rotated predecessors NAME.log.1, NAME.log.2, ... */
struct logfile {
  int dirfd;
  const char* name; /* the container's */
  int fd;           /* NAME.log, or -1 until it can be opened */
  long long size;
  int at_line_start;          /* the file is empty or ends with a newline */
  unsigned long long dropped; /* bytes lost since the last write that worked */
  int drop_errno;
};

enum cstate { NOT_STARTED, RUNNING, ENDED };

struct container {
  const char* name;
  const char* workdir;
  char** argv;
  char** envp;
  enum cstate state;
  pid_t pid;
  int start_errno; /* non-zero: it could not run (StartError); set by the vforked child too */
  int wait_status;
  long long started_ms;
  long long finished_ms;
  int out_fd; /* read end of the pipe that is the container's stdout and stderr; -1 once closed */
  struct logfile log;
  int lease_stopped; /* running (or not started) when the node's lease ran out */
};

static long long g_log_max_bytes = DEFAULT_LOG_MAX_BYTES;
static long g_log_max_files = DEFAULT_LOG_MAX_FILES;
static long long g_nofile;       /* > 0: the containers' soft RLIMIT_NOFILE */
static const char* g_lease_path; /* NULL: the pod needs no lease */

/* Set by signal handlers only; the main loop does the work. */
static volatile sig_atomic_t g_term;
static volatile sig_atomic_t g_alarm;
static volatile sig_atomic_t g_term_grace = -1;

static void on_term(int sig, siginfo_t* info, void* ctx) {
  (void)sig;
  (void)ctx;
  if (info != NULL && info->si_code == SI_QUEUE && info->si_value.sival_int >= 0)
    g_term_grace = info->si_value.sival_int;
  g_term = 1;
}
static volatile sig_atomic_t g_released; /* SIGUSR1: a node holds our state file open too */
static void on_release(int sig) {
  (void)sig;
  g_released = 1;
}
static void on_alarm(int sig) {
  (void)sig;
  g_alarm = 1;
}
static void on_child(int sig) {
  (void)sig;
}

/* SIGKILL (g_alarm) in ms from now. */
static void arm_kill_timer(long long ms) {
  if (ms <= 0) {
    g_alarm = 1;
    return;
  }
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_sec = (time_t)(ms / 1000);
  it.it_value.tv_usec = (suseconds_t)(ms % 1000) * 1000;
  setitimer(ITIMER_REAL, &it, NULL);
}

/* A kill under way gets no longer than ms from now (a lease that ran out meanwhile). */
static void cut_kill_timer(long long ms) {
  struct itimerval left;
  if (getitimer(ITIMER_REAL, &left) == 0 &&
      (left.it_value.tv_sec != 0 || left.it_value.tv_usec != 0) &&
      (long long)left.it_value.tv_sec * 1000 + left.it_value.tv_usec / 1000 <= ms)
    return;
  if (!g_alarm) arm_kill_timer(ms);
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The lease's deadline in CLOCK_MONOTONIC ms; -1 when the file cannot be read or makes no sense.
   The node rewrites it in place: a read that caught a write half done has two copies that differ,
   and is tried again. */
static long long lease_deadline(void) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    int fd = open(g_lease_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[128];
    ssize_t n;
    do n = pread(fd, buf, sizeof buf - 1, 0);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    long long a = -1, b = -2;
    if (sscanf(buf, "%lld %lld", &a, &b) == 2 && a == b && a >= 0) return a;
    struct timespec pause = {0, 1000000L};
    nanosleep(&pause, NULL);
  }
  return -1;
}

static int write_all(int fd, const char* buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Replaces dir/name by buf: readers see the old file, or the whole new one. */
static int write_atomic(int dirfd, const char* name, const char* buf, size_t len, int sync) {
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%s.tmp", name);
  int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  int rc = write_all(fd, buf, len);
  if (rc == 0 && sync) rc = fsync(fd);
  if (close(fd) != 0) rc = -1;
  if (rc == 0) rc = renameat(dirfd, tmp, dirfd, name);
  if (rc != 0) unlinkat(dirfd, tmp, 0);
  return rc;
}

/* ---- logs ---- */

static void log_name(const struct logfile* lf, long index, char* out, size_t len) {
  if (index == 0)
    snprintf(out, len, "%s.log", lf->name);
  else
    snprintf(out, len, "%s.log.%ld", lf->name, index);
}

/* Read as well as written: a file that is not new (a rotation failed, or a restarted container)
   may end in the middle of a line, and where the next cut may go depends on it. */
static int log_open(struct logfile* lf) {
  char name[MAX_NAME + 32];
  log_name(lf, 0, name, sizeof name);
  lf->fd = openat(lf->dirfd, name, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (lf->fd < 0) return -1;
  struct stat st;
  lf->size = fstat(lf->fd, &st) == 0 ? (long long)st.st_size : 0;
  char last = '\n';
  if (lf->size > 0 && pread(lf->fd, &last, 1, (off_t)(lf->size - 1)) != 1) last = '\n';
  lf->at_line_start = last == '\n';
  return 0;
}

/* Readers that have a file open keep reading it; `caldera logs` opens NAME.log anew each time.
   When NAME.log cannot be renamed (say a directory took the name NAME.log.1), the same file is
   opened again: the caller tells by its size. */
static void log_rotate(struct logfile* lf) {
  char from[MAX_NAME + 32], to[MAX_NAME + 32];
  if (lf->fd >= 0) close(lf->fd);
  lf->fd = -1;
  log_name(lf, g_log_max_files - 1, to, sizeof to);
  unlinkat(lf->dirfd, to, 0);
  for (long i = g_log_max_files - 2; i >= 0; --i) {
    log_name(lf, i, from, sizeof from);
    log_name(lf, i + 1, to, sizeof to);
    renameat(lf->dirfd, from, lf->dirfd, to); /* ENOENT: fewer files so far */
  }
  log_open(lf); /* on failure the next write tries again */
}

/* drop_errno's value for output dropped to keep the disk's reserve. */
#define DROPPED_FOR_RESERVE (-1)

/* Whether writing `len` more bytes to the log's file system would eat into its reserve. */
static int log_into_reserve(const struct logfile* lf, size_t len) {
  struct statvfs vfs;
  if (lf->fd < 0 || fstatvfs(lf->fd, &vfs) != 0 || vfs.f_blocks == 0) return 0;
  unsigned long long unit = vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize;
  unsigned long long size = (unsigned long long)vfs.f_blocks * unit;
  unsigned long long free_bytes = (unsigned long long)vfs.f_bavail * unit;
  unsigned long long reserve = size / 100 * DISK_RESERVE_PERCENT;
  return free_bytes < reserve || free_bytes - reserve < len;
}

static void log_drop(struct logfile* lf, size_t len, int err) {
  lf->dropped += len;
  lf->drop_errno = err;
}

static ssize_t log_write_some(struct logfile* lf, const char* buf, size_t len) {
  ssize_t n;
  do n = write(lf->fd, buf, len);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    lf->size += n;
    lf->at_line_start = buf[n - 1] == '\n';
  }
  return n;
}

/* Says how much output was lost, once the log can be written again (out of the disk's reserve,
   unless `last`: the container's last word, which is said if it can be). Returns 0 when said. */
static int log_note_dropped(struct logfile* lf, int last) {
  if (lf->dropped == 0) return 0;
  if (lf->fd < 0 && log_open(lf) != 0) return -1;
  if (!last && lf->drop_errno == DROPPED_FOR_RESERVE && log_into_reserve(lf, 200)) return -1;
  char note[200];
  int m = lf->drop_errno == DROPPED_FOR_RESERVE
              ? snprintf(note, sizeof note,
                         "caldera: %llu bytes of output were lost: the disk is nearly full (its "
                         "last %d%% is kept for the node)\n",
                         lf->dropped, DISK_RESERVE_PERCENT)
              : snprintf(note, sizeof note, "caldera: %llu bytes of output were lost: %s\n",
                         lf->dropped, strerror(lf->drop_errno));
  if (log_write_some(lf, note, (size_t)m) != m) return -1;
  lf->dropped = 0;
  return 0;
}

/* Appends a container's output: rotated so that no file exceeds g_log_max_bytes, and cut after
   the last whole line that still fits. A line longer than the room left is split only when it
   cannot be kept whole anyway: it is longer than a file, or its start is in this file already.
   A rotation that leaves a file that is not empty failed, and trying again at once would fail
   again, forever: the rest goes into the file past its size, and the next append tries again. */
static void log_append(struct logfile* lf, const char* buf, size_t len) {
  int rotation_failed = 0;
  while (len > 0) {
    if (lf->fd < 0 && log_open(lf) != 0) {
      log_drop(lf, len, errno);
      return;
    }
    if (log_note_dropped(lf, 0) != 0) {
      log_drop(lf, len, lf->drop_errno == DROPPED_FOR_RESERVE ? DROPPED_FOR_RESERVE : errno);
      return;
    }
    long long room = g_log_max_bytes - lf->size;
    size_t n = len;
    if ((long long)len > room && !rotation_failed) {
      const char* nl = room > 0 ? memrchr(buf, '\n', (size_t)room) : NULL;
      if (nl != NULL)
        n = (size_t)(nl - buf) + 1;
      else if (lf->size == 0 || !lf->at_line_start)
        n = room > 0 ? (size_t)room : 0;
      else
        n = 0;
    }
    if (n == 0) {
      log_rotate(lf);
      rotation_failed = lf->fd >= 0 && lf->size > 0;
      continue;
    }
    if (log_into_reserve(lf, n)) {
      log_drop(lf, len, DROPPED_FOR_RESERVE);
      return;
    }
    ssize_t w = log_write_some(lf, buf, n);
    if (w <= 0) {
      log_drop(lf, len, w < 0 ? errno : EIO);
      return;
    }
    buf += w;
    len -= (size_t)w;
  }
}

static void log_printf(struct logfile* lf, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n > 0) log_append(lf, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

/* Copies what the container wrote so far. Returns 0 once its pipe is closed (EOF). */
static int pump(struct container* c) {
  static char buf[64 * 1024];
  for (int reads = 0; reads < 16; ++reads) { /* then the other containers get their turn */
    ssize_t n = read(c->out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return 1;
    if (n <= 0) {
      close(c->out_fd);
      c->out_fd = -1;
      return 0;
    }
    log_append(&c->log, buf, (size_t)n);
  }
  return 1;
}

__attribute__((noreturn)) static void give_up(int dirfd, int code, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg - 1, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if (n > (int)sizeof msg - 2) n = (int)sizeof msg - 2;
  msg[n++] = '\n';
  if (dirfd >= 0) write_atomic(dirfd, "shim.err", msg, (size_t)n, 0);
  write_all(STDERR_FILENO, msg, (size_t)n);
  exit(code);
}

/* ---- spec ---- */

struct cursor {
  char* p;
  char* end;
};

static char* next_field(struct cursor* c) {
  if (c->p >= c->end) return NULL;
  char* nul = memchr(c->p, '\0', (size_t)(c->end - c->p));
  if (nul == NULL) return NULL;
  char* field = c->p;
  c->p = nul + 1;
  return field;
}

static int parse_count(const char* s, long max, long* out) {
  if (s == NULL || *s == '\0') return -1;
  long v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
    if (v > max) return -1;
  }
  *out = v;
  return 0;
}

static int valid_name(const char* s) {
  size_t len = strlen(s);
  if (len == 0 || len > MAX_NAME || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
  for (; *s; ++s)
    if (*s == '/' || (unsigned char)*s <= ' ' || *s == 0x7f) return 0;
  return 1;
}

static int has_key(char** env, size_t n, const char* key, size_t keylen) {
  for (size_t i = 0; i < n; ++i)
    if (strncmp(env[i], key, keylen) == 0 && env[i][keylen] == '=') return 1;
  return 0;
}

/* Parses the spec in place (fields point into buf). Returns the problem, or NULL. */
static const char* parse_spec(char* buf, size_t len, const char* path_entry, struct container** out,
                              size_t* out_n) {
  struct cursor cur = {buf, buf + len};
  const char* magic = next_field(&cur);
  if (magic == NULL || strcmp(magic, SPEC_MAGIC) != 0) return "spec: bad magic";
  long n;
  if (parse_count(next_field(&cur), MAX_CONTAINERS, &n) != 0) return "spec: bad container count";
  struct container* cs = calloc((size_t)n + 1, sizeof *cs);
  if (cs == NULL) return "spec: out of memory";
  for (long i = 0; i < n; ++i) {
    struct container* c = &cs[i];
    c->out_fd = -1;
    c->log.fd = -1;
    c->name = next_field(&cur);
    c->workdir = next_field(&cur);
    if (c->name == NULL || c->workdir == NULL) return "spec: truncated";
    if (!valid_name(c->name)) return "spec: bad container name";
    for (long j = 0; j < i; ++j)
      if (strcmp(cs[j].name, c->name) == 0) return "spec: duplicate container name";
    long argc, envc;
    if (parse_count(next_field(&cur), 1L << 20, &argc) != 0) return "spec: bad argc";
    c->argv = calloc((size_t)argc + 1, sizeof(char*));
    if (c->argv == NULL) return "spec: out of memory";
    for (long j = 0; j < argc; ++j)
      if ((c->argv[j] = next_field(&cur)) == NULL) return "spec: truncated argv";
    if (parse_count(next_field(&cur), 1L << 20, &envc) != 0) return "spec: bad envc";
    c->envp = calloc((size_t)envc + 3, sizeof(char*));
    if (c->envp == NULL) return "spec: out of memory";
    for (long j = 0; j < envc; ++j) {
      char* kv = next_field(&cur);
      if (kv == NULL) return "spec: truncated env";
      char* eq = strchr(kv, '=');
      if (eq == NULL || eq == kv) return "spec: env entry is not K=V";
      c->envp[j] = kv;
    }
    /* The container's env wins over the base env. */
    size_t m = (size_t)envc;
    if (!has_key(c->envp, (size_t)envc, "PATH", 4)) c->envp[m++] = (char*)path_entry;
    if (!has_key(c->envp, (size_t)envc, "HOME", 4)) c->envp[m++] = "HOME=/";
  }
  if (cur.p != cur.end) return "spec: trailing data";
  *out = cs;
  *out_n = (size_t)n;
  return NULL;
}

/* The whole of stdin, at most MAX_SPEC_BYTES. */
static char* read_spec(size_t* len) {
  size_t cap = 4096, got = 0;
  char* buf = malloc(cap);
  while (buf != NULL) {
    if (got == cap) {
      if (cap >= (size_t)MAX_SPEC_BYTES) {
        errno = EFBIG;
        break;
      }
      char* bigger = realloc(buf, cap * 2);
      if (bigger == NULL) break;
      buf = bigger;
      cap *= 2;
    }
    ssize_t n = read(STDIN_FILENO, buf + got, cap - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (n == 0) {
      *len = got;
      return buf;
    }
    got += (size_t)n;
  }
  free(buf);
  return NULL;
}

/* ---- containers ---- */

/* In the vforked child, which shares our memory until it execs: it reports why it cannot run
   through c->start_errno, writes without stdio and returns nowhere. */
__attribute__((noreturn)) static void child_fail(struct container* c, int err, const char* what) {
  char msg[512];
  int n = what != NULL ? snprintf(msg, sizeof msg, "caldera: cannot run %s: %s: %s\n", c->argv[0],
                                  what, strerror(err))
                       : snprintf(msg, sizeof msg, "caldera: cannot run %s: %s\n", c->argv[0],
                                  strerror(err));
  if (n > 0) write_all(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
  c->start_errno = err != 0 ? err : EIO;
  _exit(err == EACCES || err == EPERM ? 126 : 127);
}

/* In the vforked child: never returns. Our signal handlers are not the child's to run (they would
   write our memory), so they are reset before the mask that blocks them is lifted. */
__attribute__((noreturn)) static void run_child(struct container* c, int outfd, int devnull,
                                                const sigset_t* orig_mask) {
  setpgid(0, 0); /* its own group, so that signals reach the container's whole tree */
  static const int reset[] = {SIGHUP, SIGPIPE, SIGTERM, SIGCHLD, SIGALRM};
  for (size_t i = 0; i < sizeof reset / sizeof reset[0]; ++i) signal(reset[i], SIG_DFL);
  sigprocmask(SIG_SETMASK, orig_mask, NULL);
  if (g_nofile > 0) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
      rl.rlim_cur = (rlim_t)g_nofile < rl.rlim_max ? (rlim_t)g_nofile : rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl); /* lowering the soft limit cannot fail */
    }
  }

  if (dup2(outfd, STDOUT_FILENO) < 0 || dup2(outfd, STDERR_FILENO) < 0)
    child_fail(c, errno, "dup2");
  if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0)
    child_fail(c, devnull < 0 ? ENOENT : errno, "/dev/null");
  if (c->workdir[0] != '\0' && chdir(c->workdir) != 0) {
    int err = errno;
    char what[256];
    snprintf(what, sizeof what, "working dir %s", c->workdir);
    child_fail(c, err, what);
  }
  /* execvp searches the PATH of environ: the container's, as in Kubernetes. The parent puts its
     own back once we exec or exit. */
  environ = c->envp;
  execvp(c->argv[0], c->argv);
  child_fail(c, errno, NULL);
}

static void start_failed(struct container* c, int err) {
  c->start_errno = err;
  c->state = ENDED;
  c->finished_ms = now_ms();
}

/* vfork: the shim is small, but copying it for every container is still work the container
   does not need, and the child's exec error comes back through memory instead of a pipe. */
static void start_container(struct container* c, int dirfd, int devnull,
                            const sigset_t* orig_mask) {
  c->started_ms = now_ms();
  c->log.dirfd = dirfd;
  c->log.name = c->name;
  if (c->argv[0] == NULL) {
    log_printf(&c->log, "caldera: cannot run container %s: no command\n", c->name);
    start_failed(c, ENOENT);
    return;
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    start_failed(c, errno);
    return;
  }
  char** own_environ = environ;
  c->start_errno = 0;
  pid_t pid = vfork();
  if (pid == 0) run_child(c, out[1], devnull, orig_mask);
  environ = own_environ;
  close(out[1]); /* EOF on out[0] once the container and its children are gone */
  if (pid < 0) {
    start_failed(c, errno);
    close(out[0]);
    return;
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  c->out_fd = out[0];
  c->pid = pid;
  c->state = RUNNING; /* also when it could not exec (start_errno): it is reaped as it comes */
}

static void signal_running(struct container* cs, size_t n, int sig) {
  for (size_t i = 0; i < n; ++i)
    if (cs[i].state == RUNNING) kill(-cs[i].pid, sig);
}

static size_t reap(struct container* cs, size_t n) {
  size_t reaped = 0;
  for (;;) {
    int st;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid <= 0) return reaped;
    for (size_t i = 0; i < n; ++i) {
      if (cs[i].state != RUNNING || cs[i].pid != pid) continue;
      cs[i].state = ENDED;
      cs[i].wait_status = st;
      cs[i].finished_ms = now_ms();
      /* The container ends with its main process, as in Kubernetes: no stragglers. */
      kill(-pid, SIGKILL);
      ++reaped;
      break;
    }
  }
}

/* ---- records ---- */

static int g_state_fd = -1;
/* Record lines the node's pipe had no room for yet, sent as it drains. */
static char* g_unsent;
static size_t g_unsent_len, g_unsent_cap;
static int g_report_broken; /* the node's pipe is gone (or no memory): it gets nothing more */

/* A state file deleted under us (the node's data dir lost, to be restored from a backup that
   knows the pod as running) would take the pod's outcome with it once we exit. We keep it open
   instead, for ORPHAN_WAIT_MS at most, until a restored node has opened it too through /proc and
   lets us go (SIGUSR1, before or after the pod's end; or a SIGTERM). */
#define ORPHAN_WAIT_MS (10LL * 60 * 1000)
static void linger_if_orphaned(const sigset_t* wait_mask) {
  struct stat st;
  if (g_released || g_state_fd < 0 || fstat(g_state_fd, &st) != 0 || st.st_nlink != 0) return;
  g_term = 0;
  long long until = now_ms() + ORPHAN_WAIT_MS;
  while (!g_term && !g_released && now_ms() < until) {
    struct timespec second = {1, 0};
    ppoll(NULL, 0, &second, wait_mask);
  }
}

/* Sends what is unsent, whole lines at a time, at most PIPE_BUF bytes per write: such a write to
   a pipe is all or nothing, so the node never sees a torn line. Never waits: stdout does not
   block, and what a slow node has no room for waits here for the next try. */
static void flush_report(void) {
  size_t sent = 0;
  while (!g_report_broken && sent < g_unsent_len) {
    size_t len = g_unsent_len - sent;
    if (len > PIPE_BUF) {
      const char* nl = memrchr(g_unsent + sent, '\n', PIPE_BUF);
      len = nl != NULL ? (size_t)(nl - (g_unsent + sent)) + 1 : PIPE_BUF;
    }
    ssize_t n = write(STDOUT_FILENO, g_unsent + sent, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n != (ssize_t)len)
      g_report_broken = 1; /* the node is gone: it reads the state file */
    else
      sent += len;
  }
  if (g_report_broken) sent = g_unsent_len;
  memmove(g_unsent, g_unsent + sent, g_unsent_len - sent);
  g_unsent_len -= sent;
}

/* Appends whole lines to the state file, then offers them to the node. */
static int record(const char* buf, size_t len) {
  int rc = write_all(g_state_fd, buf, len);
  if (!g_report_broken) {
    if (g_unsent_len + len > g_unsent_cap) {
      size_t cap = (g_unsent_len + len) * 2;
      char* grown = realloc(g_unsent, cap);
      if (grown == NULL) {
        g_report_broken = 1;
        return rc;
      }
      g_unsent = grown;
      g_unsent_cap = cap;
    }
    memcpy(g_unsent + g_unsent_len, buf, len);
    g_unsent_len += len;
    flush_report();
  }
  return rc;
}

static int record_started(const struct container* cs, size_t n) {
  char* buf = malloc(n * (MAX_NAME + 48) + 16);
  if (buf == NULL) return -1;
  size_t len = 0;
  for (size_t i = 0; i < n; ++i)
    len += (size_t)sprintf(buf + len, "start %s %d %lld\n", cs[i].name, (int)cs[i].pid,
                           cs[i].started_ms);
  len += (size_t)sprintf(buf + len, "running\n");
  int rc = record(buf, len);
  free(buf);
  return rc;
}

static int record_ended(const struct container* cs, size_t n) {
  char* buf = malloc(n * (MAX_NAME + 96) + 16);
  if (buf == NULL) return -1;
  size_t len = 0;
  for (size_t i = 0; i < n; ++i) {
    const struct container* c = &cs[i];
    int code = 0, sig = 0;
    const char* reason;
    if (c->lease_stopped && c->state == NOT_STARTED) {
      reason = "LeaseExpired";
    } else if (c->start_errno != 0) {
      reason = "StartError";
      code = c->start_errno == EACCES || c->start_errno == EPERM ? 126 : 127;
    } else if (WIFSIGNALED(c->wait_status)) {
      reason = "Signaled";
      sig = WTERMSIG(c->wait_status);
      code = 128 + sig; /* what a shell (and Kubernetes) reports */
    } else {
      code = WEXITSTATUS(c->wait_status);
      reason = code == 0 ? "Completed" : "Error";
    }
    if (c->lease_stopped) reason = "LeaseExpired";
    len += (size_t)sprintf(buf + len, "end %s %d %d %s %lld %lld\n", c->name, code, sig, reason,
                           c->started_ms, c->finished_ms);
  }
  len += (size_t)sprintf(buf + len, "done\n");
  int rc = record(buf, len);
  free(buf);
  return rc;
}

static void setup_signals(sigset_t* orig_mask, sigset_t* wait_mask) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGPIPE, &sa, NULL);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  sa.sa_handler = on_child;
  sa.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  sa.sa_flags = SA_SIGINFO;
  sa.sa_sigaction = on_term;
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_flags = 0;
  sa.sa_handler = on_release;
  sigaction(SIGUSR1, &sa, NULL);

  /* Blocked except inside sigsuspend: no signal slips between a check and the wait. */
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGCHLD);
  sigaddset(&block, SIGALRM);
  sigaddset(&block, SIGUSR1);
  sigprocmask(SIG_BLOCK, &block, orig_mask);
  *wait_mask = *orig_mask;
  sigdelset(wait_mask, SIGTERM);
  sigdelset(wait_mask, SIGCHLD);
  sigdelset(wait_mask, SIGALRM);
  sigdelset(wait_mask, SIGUSR1);
}

/* Field 22 of /proc/self/stat: this process's start time, so a restarted node can tell our pid
   from a reused one. 0 when unreadable. */
static unsigned long long self_start_ticks(void) {
  char buf[4096];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char* p = strrchr(buf, ')');
  if (p == NULL) return 0;
  /* After ") " come fields 3, 4, ...; the start time is field 22. */
  for (int field = 2; field < 22 && p != NULL; ++field) p = strchr(p + 1, ' ');
  return p == NULL ? 0 : strtoull(p + 1, NULL, 10);
}

/* One supervisor per pod, ever. A node killed after spawning us but before recording it must not
   start the pod a second time: the state file is made exclusively, so a second shim for the pod
   (now or after this one ended) finds it and runs nothing. Its first line tells a restarted node
   whom to adopt. */
/* ---- views (VIEWS) ---- */

#define MAX_VIEWS 8

/* Lays VIEWS over this process's own copy of the mount table. Returns NULL, or why not (a static
   message). Called before any container starts; the host's mounts are never changed. */
static const char* setup_views(const char* pod_dir, const char* views) {
  static char why[1024];
  char list[4096];
  if (strlen(views) >= sizeof list) return "VIEWS is too long";
  strcpy(list, views);
  if (unshare(CLONE_NEWNS) != 0) {
    snprintf(why, sizeof why, "cannot take a private mount namespace: %.300s", strerror(errno));
    return why;
  }
  /* Nothing mounted here may reach the host's namespace. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    snprintf(why, sizeof why, "cannot make the mounts private: %.300s", strerror(errno));
    return why;
  }
  char overlaid[MAX_VIEWS][PATH_MAX];
  int n_overlaid = 0, n = 0;
  for (char* save = NULL, *item = strtok_r(list, ",", &save); item != NULL;
       item = strtok_r(NULL, ",", &save)) {
    char* eq = strchr(item, '=');
    if (eq == NULL || item[0] != '/' || eq == item + 1 || eq[1] == '\0' || eq[1] == '/' ||
        strstr(item, "..") != NULL || ++n > MAX_VIEWS) {
      snprintf(why, sizeof why, "bad view '%.300s' (TARGET=SOURCE, TARGET absolute)", item);
      return why;
    }
    *eq = '\0';
    const char* target = item;
    const char* source = eq + 1;
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", target);
    char* slash = strrchr(parent, '/');
    if (slash == parent) {
      snprintf(why, sizeof why, "a view's target needs a parent other than /: '%.300s'", target);
      return why;
    }
    *slash = '\0';
    int done = 0;
    for (int i = 0; i < n_overlaid; ++i) done |= strcmp(overlaid[i], parent) == 0;
    if (!done) {
      char upper[PATH_MAX], work[PATH_MAX], options[3 * PATH_MAX + 64];
      snprintf(upper, sizeof upper, "%s/.views/%d/upper", pod_dir, n_overlaid);
      snprintf(work, sizeof work, "%s/.views/%d/work", pod_dir, n_overlaid);
      char base[PATH_MAX];
      snprintf(base, sizeof base, "%s/.views", pod_dir);
      mkdir(base, 0700);
      snprintf(base, sizeof base, "%s/.views/%d", pod_dir, n_overlaid);
      mkdir(base, 0700);
      if ((mkdir(upper, 0755) != 0 && errno != EEXIST) ||
          (mkdir(work, 0700) != 0 && errno != EEXIST)) {
        snprintf(why, sizeof why, "cannot make %.300s: %.300s", upper, strerror(errno));
        return why;
      }
      snprintf(options, sizeof options, "lowerdir=%s,upperdir=%s,workdir=%s", parent, upper, work);
      if (mount("overlay", parent, "overlay", 0, options) != 0) {
        snprintf(why, sizeof why, "cannot lay an overlay over %.300s: %.300s", parent, strerror(errno));
        return why;
      }
      snprintf(overlaid[n_overlaid++], PATH_MAX, "%s", parent);
    }
    char from[PATH_MAX];
    snprintf(from, sizeof from, "%s/%s", pod_dir, source);
    if (mkdir(from, 0755) != 0 && errno != EEXIST) {
      snprintf(why, sizeof why, "cannot make %.300s: %.300s", from, strerror(errno));
      return why;
    }
    if (mkdir(target, 0755) != 0 && errno != EEXIST) {
      snprintf(why, sizeof why, "cannot make %.300s: %.300s", target, strerror(errno));
      return why;
    }
    if (mount(from, target, NULL, MS_BIND | MS_REC, NULL) != 0) {
      snprintf(why, sizeof why, "cannot show %.300s at %.300s: %.300s", from, target, strerror(errno));
      return why;
    }
  }
  return NULL;
}

/* --probe-views DIR: whether this machine lets a shim show a view at /etc/volcano. */
static int probe_views(const char* dir) {
  char pod[PATH_MAX], file[PATH_MAX + 32];
  if (strlen(dir) > PATH_MAX - 64) {
    printf("the data dir's path is too long\n");
    return 1;
  }
  snprintf(pod, sizeof pod, "%s/probe-%d", dir, (int)getpid());
  if (mkdir(pod, 0755) != 0) {
    printf("cannot make %s: %s\n", pod, strerror(errno));
    return 1;
  }
  snprintf(file, sizeof file, "%s/volcano", pod);
  mkdir(file, 0755);
  snprintf(file, sizeof file, "%s/volcano/probe", pod);
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
  const char* why = setup_views(pod, "/etc/volcano=volcano");
  if (why == NULL && access("/etc/volcano/probe", F_OK) != 0) why = "the view does not show";
  printf("%s\n", why == NULL ? "ok" : why);
  return why == NULL ? 0 : 1;
}

static void claim_pod(int dirfd) {
  g_state_fd = openat(dirfd, "state", O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (g_state_fd < 0) {
    if (errno == EEXIST) {
      fprintf(stderr, "caldera-shim: the pod is claimed by another supervisor\n");
      exit(3);
    }
    give_up(dirfd, 1, "caldera-shim: cannot create state: %s", strerror(errno));
  }
  char buf[64];
  int len = snprintf(buf, sizeof buf, "shim %d %llu\n", (int)getpid(), self_start_ticks());
  if (record(buf, (size_t)len) != 0)
    give_up(dirfd, 1, "caldera-shim: cannot write state: %s", strerror(errno));
}

static int shim_main(int argc, char** argv) {
  /* First: until the SIGTERM handler is set, a SIGTERM kills the shim before any container ran. */
  sigset_t orig_mask, wait_mask;
  setup_signals(&orig_mask, &wait_mask);
  /* Descriptors 0-2 must be taken, so that no log file lands on them. */
  int fd;
  while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= STDERR_FILENO) {
  }
  if (fd > STDERR_FILENO) close(fd);
  if (getsid(0) != getpid()) setsid();
  /* The node's pipe must never hold us (a user's terminal is left as it is). */
  struct stat out_st;
  if (fstat(STDOUT_FILENO, &out_st) == 0 && S_ISFIFO(out_st.st_mode))
    fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);

  if (argc != 3 && argc != 5 && argc != 6 && argc != 7 && argc != 8 && argc != 9) {
    fprintf(stderr,
            "usage: caldera-shim POD_DIR GRACE_MS [LOG_MAX_BYTES LOG_MAX_FILES [NOFILE "
            "[LEASE_FILE [LEASE_GRACE_MS [VIEWS]]]]]\n");
    return 2;
  }
  if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "caldera-shim: cannot make %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0 || fchdir(dirfd) != 0) {
    fprintf(stderr, "caldera-shim: %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  claim_pod(dirfd);
  char* endp;
  errno = 0;
  long long grace = strtoll(argv[2], &endp, 10);
  if (errno != 0 || *endp != '\0' || endp == argv[2] || grace < 0 || grace > MAX_GRACE_MS)
    give_up(dirfd, 2, "caldera-shim: bad GRACE_MS '%s' (0..%d)", argv[2], MAX_GRACE_MS);
  if (argc >= 5) {
    errno = 0;
    g_log_max_bytes = strtoll(argv[3], &endp, 10);
    if (errno != 0 || *endp != '\0' || endp == argv[3] || g_log_max_bytes <= 0)
      give_up(dirfd, 2, "caldera-shim: bad LOG_MAX_BYTES '%s'", argv[3]);
    errno = 0;
    g_log_max_files = strtol(argv[4], &endp, 10);
    if (errno != 0 || *endp != '\0' || endp == argv[4] || g_log_max_files < 1 ||
        g_log_max_files > MAX_LOG_FILES)
      give_up(dirfd, 2, "caldera-shim: bad LOG_MAX_FILES '%s' (1..%d)", argv[4], MAX_LOG_FILES);
  }
  if (argc >= 6) {
    errno = 0;
    g_nofile = strtoll(argv[5], &endp, 10);
    if (errno != 0 || *endp != '\0' || endp == argv[5] || g_nofile < 0)
      give_up(dirfd, 2, "caldera-shim: bad NOFILE '%s'", argv[5]);
  }
  if (argc >= 7 && argv[6][0] != '\0') g_lease_path = argv[6];
  long long lease_grace = grace < LEASE_STOP_GRACE_MS ? grace : LEASE_STOP_GRACE_MS;
  if (argc >= 8) {
    errno = 0;
    lease_grace = strtoll(argv[7], &endp, 10);
    if (errno != 0 || *endp != '\0' || endp == argv[7] || lease_grace < 0 ||
        lease_grace > MAX_GRACE_MS)
      give_up(dirfd, 2, "caldera-shim: bad LEASE_GRACE_MS '%s' (0..%d)", argv[7], MAX_GRACE_MS);
  }

  size_t spec_len = 0;
  char* spec = read_spec(&spec_len);
  if (spec == NULL) give_up(dirfd, 2, "caldera-shim: cannot read spec: %s", strerror(errno));
  const char* path = getenv("PATH");
  size_t path_len = strlen(path != NULL ? path : DEFAULT_PATH) + 6;
  char* path_entry = malloc(path_len);
  if (path_entry == NULL) give_up(dirfd, 2, "caldera-shim: out of memory");
  snprintf(path_entry, path_len, "PATH=%s", path != NULL ? path : DEFAULT_PATH);
  struct container* cs = NULL;
  size_t n = 0;
  const char* problem = parse_spec(spec, spec_len, path_entry, &cs, &n);
  if (problem != NULL) give_up(dirfd, 2, "caldera-shim: %s", problem);
  if (argc == 9 && argv[8][0] != '\0') {
    /* The pod runs without them rather than not at all: its files are in POD_DIR too. */
    const char* why = setup_views(argv[1], argv[8]);
    if (why != NULL) {
      char msg[600];
      int len = snprintf(msg, sizeof msg, "caldera-shim: views not shown: %s\n", why);
      write_atomic(dirfd, "shim.err", msg, (size_t)len, 0);
    }
  }

  /* A lease already over (the node was cut off while the launch was on its way): nothing starts. */
  long long lease_due = -1; /* when the deadline known so far comes: read the file again then */
  int lease_over = 0;
  if (g_lease_path != NULL) {
    lease_due = lease_deadline();
    lease_over = lease_due <= mono_ms();
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  for (size_t i = 0; i < n; ++i) {
    if (lease_over)
      cs[i].lease_stopped = 1;
    else
      start_container(&cs[i], dirfd, devnull, &orig_mask);
  }
  if (devnull >= 0) close(devnull);
  int record_failed = record_started(cs, n) != 0;

  size_t running = 0, open_pipes = 0;
  for (size_t i = 0; i < n; ++i) {
    running += cs[i].state == RUNNING;
    open_pipes += cs[i].out_fd >= 0;
  }
  struct pollfd* fds = calloc(n + 2, sizeof *fds);
  size_t* fd_owner = calloc(n + 2, sizeof *fd_owner);
  if (fds == NULL || fd_owner == NULL) give_up(dirfd, 1, "caldera-shim: out of memory");
  int forwarded = 0, escalated = 0;
  long long drain_until = -1;
  /* Until every container ended and its output is in its log: the status comes after the logs,
     so a pod reported finished has its whole output to show. */
  for (;;) {
    running -= reap(cs, n);
    if (running == 0 && open_pipes == 0) break;
    struct timespec drain_left, *timeout = NULL;
    if (running == 0) {
      if (drain_until < 0) drain_until = now_ms() + DRAIN_MS;
      long long left = drain_until - now_ms();
      if (left <= 0) break;
      drain_left.tv_sec = (time_t)(left / 1000);
      drain_left.tv_nsec = (long)(left % 1000) * 1000000;
      timeout = &drain_left;
    }
    if (running > 0 && lease_due >= 0 && !lease_over && mono_ms() >= lease_due) {
      lease_due = lease_deadline(); /* renewed meanwhile, most often */
      if (lease_due <= mono_ms()) {
        lease_over = 1;
        for (size_t i = 0; i < n; ++i)
          if (cs[i].state == RUNNING) cs[i].lease_stopped = 1;
        g_term = 1; /* stopped as a kill stops it, with the lease's grace period at most */
        if (g_term_grace < 0 || g_term_grace > lease_grace) g_term_grace = (int)lease_grace;
        if (forwarded && !escalated) cut_kill_timer(lease_grace);
      }
    }
    if (running > 0 && lease_due >= 0 && !lease_over && timeout == NULL) {
      long long left = lease_due - mono_ms();
      if (left < 0) left = 0;
      drain_left.tv_sec = (time_t)(left / 1000);
      drain_left.tv_nsec = (long)(left % 1000) * 1000000;
      timeout = &drain_left;
    }
    if (running > 0 && g_term && !forwarded) {
      forwarded = 1;
      g_alarm = 0;
      signal_running(cs, n, SIGTERM);
      arm_kill_timer(g_term_grace >= 0 ? (long long)g_term_grace : grace);
    }
    if (running > 0 && g_alarm && forwarded && !escalated) {
      escalated = 1;
      signal_running(cs, n, SIGKILL);
    }
    nfds_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      if (cs[i].out_fd < 0) continue;
      fds[k].fd = cs[i].out_fd;
      fds[k].events = POLLIN;
      fds[k].revents = 0;
      fd_owner[k++] = i;
    }
    nfds_t pipes = k;
    if (g_unsent_len > 0 && !g_report_broken) { /* the node's pipe, once it has room */
      fds[k].fd = STDOUT_FILENO;
      fds[k].events = POLLOUT;
      fds[k++].revents = 0;
    }
    /* Signals are blocked except inside ppoll: none slips between a check and the wait. */
    int ready = ppoll(fds, k, timeout, &wait_mask);
    if (ready < 0 && errno != EINTR) {
      /* ENOMEM, or EINVAL: more pipes than RLIMIT_NOFILE (lowered under us). Retrying at once
         would fail the same way at full speed, deaf to the pipes: wait a little without them,
         then read every pipe (they do not block). */
      struct timespec pause = {0, 10 * 1000000L};
      if (timeout != NULL && timeout->tv_sec == 0 && timeout->tv_nsec < pause.tv_nsec)
        pause = *timeout;
      ppoll(NULL, 0, &pause, &wait_mask);
      for (nfds_t j = 0; j < k; ++j) fds[j].revents = j < pipes ? POLLIN : POLLOUT;
      ready = (int)k;
    }
    if (ready <= 0) continue;
    for (nfds_t j = 0; j < pipes; ++j)
      if (fds[j].revents != 0 && pump(&cs[fd_owner[j]]) == 0) --open_pipes;
    if (k > pipes && fds[pipes].revents != 0) flush_report();
  }
  for (size_t i = 0; i < n; ++i) {
    if (cs[i].out_fd >= 0) {
      pump(&cs[i]); /* what is there already; a straggler's later output is not waited for */
      if (cs[i].out_fd >= 0) close(cs[i].out_fd);
    }
    log_note_dropped(&cs[i].log, 1);
    if (cs[i].log.fd >= 0) close(cs[i].log.fd);
  }

  /* What the node's pipe has no room for now it reads from the state file, after our end. */
  if (record_ended(cs, n) != 0)
    give_up(dirfd, 1, "caldera-shim: cannot write state: %s", strerror(errno));
  if (record_failed) give_up(dirfd, 1, "caldera-shim: cannot write state (started)");
  linger_if_orphaned(&wait_mask);
  return 0;
}

/* ---- launcher ---- */

#define LAUNCH_ARGS 9 /* the request's sequence number, then the shim's eight arguments */
#define CLONE_PIDFD_FLAG 0x00001000

/* Reads one request: its arguments into args (pointing into buf) and its two descriptors. Any
   other descriptors that came along are closed. Returns -1 once calderad is gone, 1 for a
   request that is not one. */
static int launcher_receive(char* buf, size_t len, char** args, int fds[2]) {
  union {
    struct cmsghdr hdr;
    char space[CMSG_SPACE(8 * sizeof(int))];
  } control;
  struct iovec iov = {buf, len - 1};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.space;
  msg.msg_controllen = sizeof control.space;
  ssize_t n;
  do n = recvmsg(STDIN_FILENO, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return -1; /* calderad is gone (or the socket broke): so are we */
  buf[n] = '\0';
  fds[0] = fds[1] = -1;
  int got = 0;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got < 2)
        fds[got] = fd;
      else
        close(fd);
      ++got;
    }
  }
  char* p = buf;
  int ok = got == 2 && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
  for (int i = 0; i < LAUNCH_ARGS && ok; ++i) {
    if (p >= buf + n) ok = 0;
    args[i] = p;
    p += strlen(p) + 1;
  }
  return ok ? 0 : 1;
}

/* The answer: the request's sequence number, the child's pid (negative: -errno) and its pidfd.
   An answer that cannot be sent would leave the next ones matched to the wrong pods: calderad
   then finds every pod of ours through its record instead, as it does when we die. */
static void launcher_answer(uint32_t seq, int32_t pid, int pidfd) {
  union {
    struct cmsghdr hdr;
    char space[CMSG_SPACE(sizeof(int))];
  } control;
  int32_t answer[2] = {(int32_t)seq, pid};
  struct iovec iov = {answer, sizeof answer};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (pidfd >= 0) {
    memset(&control, 0, sizeof control);
    msg.msg_control = control.space;
    msg.msg_controllen = sizeof control.space;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &pidfd, sizeof(int));
  }
  ssize_t n;
  do n = sendmsg(STDIN_FILENO, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof answer) _exit(1);
}

/* Whether calderad has hung up: requests it queued before it went are not run for nobody. */
static int launcher_orphaned(void) {
  struct pollfd p = {STDIN_FILENO, POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0;
}

static int launcher_main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGCHLD, &sa, NULL); /* children are reaped by the kernel: no zombies, no waits */
  sigaction(SIGPIPE, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  static char buf[64 * 1024];
  for (;;) {
    char* args[LAUNCH_ARGS + 1];
    int fds[2];
    int rc = launcher_receive(buf, sizeof buf, args, fds);
    if (rc < 0 || launcher_orphaned()) return 0;
    uint32_t seq = rc == 0 ? (uint32_t)strtoul(args[0], NULL, 10) : 0;
    if (rc > 0) {
      launcher_answer(seq, -EINVAL, -1);
    } else {
      /* clone rather than clone3, which some seccomp profiles refuse (Docker's among them) */
      int pidfd = -1;
      long pid =
          syscall(SYS_clone, (unsigned long)(CLONE_PIDFD_FLAG | SIGCHLD), NULL, &pidfd, NULL, NULL);
      if (pid == 0) {
        /* The shim of this pod from here on: its spec on stdin, its record pipe as stdout and
           stderr, its own session, signals as a fresh process has them. */
        if (dup2(fds[0], STDIN_FILENO) < 0 || dup2(fds[1], STDOUT_FILENO) < 0 ||
            dup2(fds[1], STDERR_FILENO) < 0)
          _exit(2);
        close(fds[0]);
        close(fds[1]);
        sa.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &sa, NULL);
        setsid();
        char* argv[LAUNCH_ARGS + 1] = {"caldera-shim", args[1], args[2], args[3], args[4],
                                       args[5],        args[6], args[7], args[8], NULL};
        exit(shim_main(LAUNCH_ARGS, argv));
      }
      launcher_answer(seq, pid < 0 ? -errno : (int32_t)pid, pid < 0 ? -1 : pidfd);
      if (pidfd >= 0) close(pidfd);
    }
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
  }
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--launcher") == 0) return launcher_main();
  if (argc == 3 && strcmp(argv[1], "--probe-views") == 0) return probe_views(argv[2]);
  return shim_main(argc, argv);
}
