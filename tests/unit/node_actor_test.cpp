// The node actor on the real store, with simulated pods (no processes): what it reports and
// writes, and, on a small tmpfs of its own that fills up and is then freed, what it keeps while
// writes fail and writes again once it can (the tmpfs needs root; skipped where not allowed).
#include "actors/node/node_actor.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <capnp/message.h>
#include <caf/all.hpp>

#include "../proc_stat.hpp"
#include "actors/node/lease_file.hpp"
#include "actors/node/pod_dir.hpp"
#include "actors/protocol/atoms.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/codec/pod_kill.hpp"
#include "messages/store.capnp.h"
#include "temp_store.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::string sim_launch(const std::string& uid, int64_t duration_ms = 0) {
  capnp::MallocMessageBuilder b;
  auto l = b.initRoot<cluster::PodLaunch>();
  Pod pod;
  pod.uid = uid;
  pod.name = "x-main-0";
  pod.namespace_ = "default";
  pod.job_name = "x";
  pod.task_name = "main";
  encode(pod, l.initPod());
  l.initContainers(1)[0].setName("main");
  l.setSimDurationMs(duration_ms);
  return to_bytes(b);
}

// The phase of the pod's record in the store, if it has one.
std::optional<PodPhase> recorded_phase(Store& store, const std::string& uid) {
  auto value = store.get(Family::NodePods, uid);
  if (!value) return std::nullopt;
  FlatReader reader(*value);
  return decode(reader.root<store::NodePod>().getStatus()).phase;
}

// A node (its data dir and its store) on its own 4 MiB tmpfs, which a filler file fills up.
class NodeActor : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/caldera-node-actor-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    mnt_ = tmpl;
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      fs::remove(mnt_);
      mnt_.clear();
      GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
    }
    db_ = mnt_ / "db";
    data_ = mnt_ / "node";
  }
  void TearDown() override {
    if (mnt_.empty()) return;
    ::umount2(mnt_.c_str(), MNT_DETACH);
    fs::remove(mnt_);
  }

  // Writes the filler until the filesystem has no page left.
  void fill_disk() {
    int fd = ::open((mnt_ / "filler").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    std::string chunk(64 << 10, 'f');
    for (size_t size = chunk.size(); size > 0; size /= 2)
      while (::write(fd, chunk.data(), size) == ssize_t(size)) {
      }
    ::close(fd);
  }
  void free_disk() { fs::remove(mnt_ / "filler"); }

  // Commits 4 KiB values (of another family than the node's) until one fails for want of a
  // page: from then on the store refuses writes until it resumes, once space is back.
  static std::string write_until_full(Store& s) {
    for (int i = 0; i < 1000; ++i) {
      std::string error = "done not called";
      s.commit({Write{Family::Jobs, "full" + std::to_string(i), std::string(4096, 'v')}},
               [&](std::string e) { error = std::move(e); });
      s.flush();
      if (!error.empty()) return error;
    }
    return "";
  }

  fs::path mnt_, db_, data_;
};

// A pod's record whose delete failed used to stay, with its logs, until the node restarted
// (unless its status had failed to be written too): now its logs go at once (deleting is what
// frees space) and the record's delete is made again once the store can write.
TEST_F(NodeActor, AFailedDeleteIsMadeAgainOnceTheStoreCanWrite) {
  auto opened = Store::open(db_.string(), StoreOptions{.resume_interval = 50ms});
  ASSERT_TRUE(opened.ok()) << opened.error();
  std::shared_ptr<Store> store = std::move(opened.value());
  const fs::path pod_dir = data_ / "pods" / "u1";
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    caf::scoped_actor coordinator{sys};  // its mailbox takes the reports, unread
    NodeActorEnv env;
    env.name = "n1";
    env.data_dir = data_.string();
    env.shim_path = "/nonexistent/caldera-shim";
    env.store = store;
    env.coordinator = caf::actor_cast<caf::actor>(coordinator);
    auto node = spawn_node_actor(sys, env);

    // Whether the node still has the pod, once it has handled every message sent to it so far.
    caf::scoped_actor client{sys};
    auto node_has_pod = [&] {
      bool has = false;
      client
          ->request(node, 5s, log_atom::value, std::string("u1"), std::string("main"), int64_t{0},
                    int64_t{0})
          .receive([&](const std::string&, int64_t, bool) { has = true; },
                   [&](const caf::error&) { has = false; });
      return has;
    };

    caf::anon_send(node, launch_atom::value, sim_launch("u1"));
    ASSERT_TRUE(
        eventually([&] { return recorded_phase(*store, "u1") == PodPhase::Succeeded; }, 5s));
    fs::create_directories(pod_dir);
    std::ofstream(pod_dir / "main.log") << "its logs\n";

    fill_disk();
    auto error = write_until_full(*store);
    ASSERT_NE(error.find("No space left"), std::string::npos) << error;
    ASSERT_FALSE(store->writable());

    caf::anon_send(node, remove_atom::value, std::string("u1"));
    ASSERT_TRUE(node_has_pod());  // the remove is handled: its delete is queued
    store->flush();               // the delete has failed: the node is told so
    ASSERT_TRUE(node_has_pod());  // and has heard it, and kept the pod's record
    EXPECT_TRUE(store->get(Family::NodePods, "u1"));
    EXPECT_FALSE(fs::exists(pod_dir)) << "its logs stay on the full disk";
    // The space they took lets the store write again: the delete is made again then.
    EXPECT_TRUE(eventually([&] { return store->writable(); }, 5s));
    EXPECT_TRUE(eventually([&] { return !store->get(Family::NodePods, "u1"); }, 10s))
        << "the delete was not made again";
    EXPECT_FALSE(node_has_pod());
    store->flush();
    EXPECT_FALSE(store->get(Family::NodePods, "u1").has_value());
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  }
  ASSERT_EQ(store.use_count(), 1);
  store.reset();

  // Durable: after a reopen (with room for its flush) the node's family is empty, and its pod
  // directory is gone.
  free_disk();
  auto reopened = Store::open(db_.string());
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  int records = 0;
  reopened.value()->scan(Family::NodePods, [&](std::string_view, std::string_view) { ++records; });
  EXPECT_EQ(records, 0);
  EXPECT_FALSE(fs::exists(pod_dir));
}

// The reports a node sends its coordinator for simulated pods, and the writes they cost: a pod
// that runs for no time is written and reported once, ended; one that runs for a while twice.
class SimulatedPods : public testing::TempStoreTest {
 protected:
  // Launches one pod and returns the phases and start/end times the coordinator is told of,
  // until it ends.
  struct Seen {
    PodPhase phase;
    int64_t started_ms, finished_ms;
  };
  std::vector<Seen> run(int64_t duration_ms) {
    std::vector<Seen> seen;
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    caf::scoped_actor coordinator{sys};
    NodeActorEnv env;
    env.name = "n1";
    env.data_dir = (dir_ / "node").string();
    env.shim_path = "/nonexistent/caldera-shim";
    env.store = store_;
    env.coordinator = caf::actor_cast<caf::actor>(coordinator);
    auto node = spawn_node_actor(sys, env);
    caf::anon_send(node, launch_atom::value, sim_launch("u1", duration_ms));
    bool ended = false;
    while (!ended) {
      bool timed_out = false;
      coordinator->receive([&](register_atom, const std::string&, const caf::actor&) {},
                           [&](report_atom, const std::string& bytes) {
                             FlatReader reader(bytes);
                             auto pod = decode(reader.root<cluster::PodReport>().getPod());
                             seen.push_back({pod.phase, pod.started_ms, pod.finished_ms});
                             ended = is_terminal(pod.phase);
                           },
                           caf::after(5s) >> [&] { timed_out = true; });
      if (timed_out) {
        ADD_FAILURE() << "no report within 5 s";
        break;
      }
    }
    store_->flush();
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    return seen;
  }
};

TEST_F(SimulatedPods, APodOfNoDurationIsWrittenAndReportedOnceEnded) {
  auto seen = run(0);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].phase, PodPhase::Succeeded);
  EXPECT_GT(seen[0].started_ms, 0);
  EXPECT_EQ(seen[0].started_ms, seen[0].finished_ms);
  EXPECT_EQ(store_->stats().writes, 1u);
  EXPECT_EQ(recorded_phase(*store_, "u1"), PodPhase::Succeeded);
}

TEST_F(SimulatedPods, APodThatRunsAWhileIsReportedRunningThenEnded) {
  auto seen = run(30);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].phase, PodPhase::Running);
  EXPECT_EQ(seen[1].phase, PodPhase::Succeeded);
  EXPECT_GE(seen[1].finished_ms - seen[1].started_ms, 30);
  EXPECT_EQ(store_->stats().writes, 2u);
  EXPECT_EQ(recorded_phase(*store_, "u1"), PodPhase::Succeeded);
}

// The outbox (DESIGN rule 5): each status of a pod is numbered, durable, and reported until its
// job acknowledges that number; the numbers go on rising after a restart of the node.
class NodeOutbox : public SimulatedPods {
 protected:
  NodeActorEnv env(caf::scoped_actor& coordinator) {
    NodeActorEnv e;
    e.name = "n1";
    e.data_dir = (dir_ / "node").string();
    e.shim_path = "/nonexistent/caldera-shim";
    e.store = store_;
    e.coordinator = caf::actor_cast<caf::actor>(coordinator);
    e.report_resend_after = 100ms;
    return e;
  }

  // The next report the coordinator gets within `wait` (its pod), or nothing.
  static std::optional<Pod> next_report(caf::scoped_actor& coordinator,
                                        std::chrono::milliseconds wait) {
    std::optional<Pod> got;
    bool more = true;
    while (more) {
      more = false;
      coordinator->receive(
          [&](register_atom, const std::string&, const caf::actor&) { more = true; },
          [&](report_atom, const std::string& bytes) {
            FlatReader reader(bytes);
            auto r = reader.root<cluster::PodReport>();
            got = decode(r.getPod());
            EXPECT_GT(got->status_seq, 0u);  // every status the node reports is numbered
          },
          caf::after(wait) >> [] {});
    }
    return got;
  }

  // A first run of the node (named `name`, hollow or not): it launches simulated pod u1 of
  // `duration_ms`, and stops once it has reported it Running. That report, if it came.
  std::optional<Pod> first_run(int64_t duration_ms, const std::string& name = "n1",
                               bool hollow = false) {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    caf::scoped_actor coordinator{sys};
    auto e = env(coordinator);
    e.name = name;
    e.hollow = hollow;
    auto node = spawn_node_actor(sys, e);
    caf::anon_send(node, launch_atom::value, sim_launch("u1", duration_ms));
    auto running = next_report(coordinator, 5s);
    store_->flush();
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    return running;
  }

  // Stores `b`, a NodePod record of u1, as evicted by a preemption.
  void store_preempted(SmallMessageBuilder& b) {
    auto np = b.getRoot<store::NodePod>();
    np.setEvictReason("Preempted");
    np.setEvictMessage("preempted by job default/high of higher priority");
    store_->commit({Write{Family::NodePods, "u1", to_bytes(b)}}, {});
    store_->flush();
  }

  // Stores u1's record as a node that died after spawning its supervisor left it: launched (one
  // container, `main`), evicted by a preemption, no supervisor known. In the form written before
  // records carried the launch's bytes (launch as a struct): it is still read.
  void store_unrecorded_preempted(const Container& main) {
    capnp::MallocMessageBuilder lb;
    {
      FlatReader reader(sim_launch("u1"));
      lb.setRoot(reader.root<cluster::PodLaunch>());
    }
    auto launch = lb.getRoot<cluster::PodLaunch>();
    launch.setSimDurationMs(-1);
    auto command =
        launch.getContainers()[0].initCommand(static_cast<unsigned>(main.command.size()));
    for (unsigned i = 0; i < main.command.size(); ++i) command.set(i, main.command[i]);
    SmallMessageBuilder rb;
    auto np = rb.initRoot<store::NodePod>();
    np.setLaunch(launch.asReader());
    Pod status = decode(launch.getPod().asReader());
    status.containers.emplace_back().name = "main";
    encode(status, np.initStatus());
    store_preempted(rb);
  }

  // The command line of a shim for u1 running `main`, as the dead node's launcher made it.
  std::string late_shim(const Container& main) {
    const auto spec = (dir_ / "spec").string();
    EXPECT_TRUE(pod_dir::write_file(spec, pod_dir::encode_spec({main})));
    return std::string(CALDERA_SHIM_PATH) + " " + (dir_ / "node" / "pods" / "u1").string() +
           " 100 < " + spec;
  }

  // The node started again on its store (with the shim at `shim_path`): its first report of a
  // pod that has ended, each within 5 s of the one before.
  std::optional<Pod> restart_until_ended(const std::string& shim_path) {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    caf::scoped_actor coordinator{sys};
    auto e = env(coordinator);
    e.shim_path = shim_path;
    auto node = spawn_node_actor(sys, e);
    auto report = next_report(coordinator, 5s);
    while (report && !is_terminal(report->phase)) report = next_report(coordinator, 5s);
    store_->flush();
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    return report;
  }

  static std::string acks(const std::string& uid, uint64_t seq) {
    SmallMessageBuilder b;
    auto a = b.initRoot<cluster::PodAcks>().initPods(1)[0];
    a.setUid(uid);
    a.setSeq(seq);
    return to_bytes(b);
  }
};

// An evicting kill (the scheduler's preemption) ends the pod Failed with the eviction's reason
// and the kill's text as its message, so that its job hears PodEvicted, not a failure.
// A worker's node runs pods only under a lease: a launch that comes before the first renewal
// waits for it, and once the lease runs out without one, a simulated pod (run by the node
// itself, not a supervisor) ends NodeLost.
TEST_F(NodeOutbox, ALeasedNodeStartsNothingWithoutALeaseAndEndsItsPodsWhenItRunsOut) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys};
  auto e = env(coordinator);
  e.lease_file = e.data_dir + "/lease";
  auto node = spawn_node_actor(sys, e);
  caf::anon_send(node, launch_atom::value, sim_launch("u1", 60000));
  EXPECT_FALSE(next_report(coordinator, 300ms)) << "started without a lease";
  const auto deadline = lease_file::monotonic_ms() + 500;
  coordinator->send(caf::actor_cast<caf::actor>(node), lease_atom::value, deadline);  // as its link
  auto running = next_report(coordinator, 2s);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->phase, PodPhase::Running);
  EXPECT_EQ(lease_file::read(e.lease_file), deadline) << "on disk for the supervisors";
  std::optional<Pod> ended;  // Running is sent again meanwhile: nobody acknowledges it here
  while ((ended = next_report(coordinator, 3s)) && !is_terminal(ended->phase)) {
  }
  ASSERT_TRUE(ended);
  EXPECT_GE(lease_file::monotonic_ms(), deadline) << "ended before the lease ran out";
  EXPECT_EQ(ended->phase, PodPhase::Failed);
  EXPECT_EQ(ended->reason, kNodeLost);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

// Orders that come while the coordinator acts on nothing (halted, its store lost) are held; once
// its link registers with a coordinator that acts, only that very process's held orders are
// carried out: a halted coordinator's kill, decided on a store it lost, never is, not even by the
// coordinator restored from a backup after it.
TEST_F(NodeOutbox, AHaltedCoordinatorsHeldOrdersAreDroppedAndOnlyItsSuccessorsRun) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys};  // its orders come from this process (this node id)
  auto node = spawn_node_actor(sys, env(coordinator));
  auto as_link = caf::actor_cast<caf::actor>(node);
  // Whether the pod is reported ended within `wait` (Running is sent again meanwhile: nobody
  // acknowledges it here).
  auto ends_within = [&](std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < until)
      if (auto r = next_report(coordinator, 50ms); r && is_terminal(r->phase)) return true;
    return false;
  };
  caf::anon_send(node, launch_atom::value, sim_launch("u1", 60000));
  auto running = next_report(coordinator, 5s);
  ASSERT_TRUE(running);
  coordinator->send(as_link, identity_atom::value, std::string("c1"), uint64_t{0},
                    sys.node());  // joins cluster c1
  // Halted: acts on nothing. Its kill is held; the pod runs on.
  coordinator->send(as_link, identity_atom::value, std::string(), uint64_t{0}, sys.node());
  coordinator->send(as_link, kill_atom::value, pod_kill_bytes("u1", 0, "job deleted", ""));
  EXPECT_FALSE(ends_within(300ms)) << "a halted coordinator's kill was carried out";
  // Another process (restored from a backup) acts: the halted one's kill is dropped.
  auto restored = caf::make_node_id(4242, std::string(40, 'a'));
  ASSERT_TRUE(restored);
  coordinator->send(as_link, identity_atom::value, std::string("c1"), uint64_t{1}, *restored);
  EXPECT_FALSE(ends_within(500ms)) << "the held kill was carried out";
  // The same process whose orders came before its identity: they are carried out.
  coordinator->send(as_link, identity_atom::value, std::string(), uint64_t{0}, sys.node());
  coordinator->send(as_link, kill_atom::value, pod_kill_bytes("u1", 0, "job deleted", ""));
  coordinator->send(as_link, identity_atom::value, std::string("c1"), uint64_t{1}, sys.node());
  EXPECT_TRUE(ends_within(3s)) << "its own held kill was not carried out";
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

TEST_F(NodeOutbox, AnEvictingKillEndsThePodWithTheEvictionsReason) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys};
  auto node = spawn_node_actor(sys, env(coordinator));
  caf::anon_send(node, launch_atom::value, sim_launch("u1", 60000));
  auto running = next_report(coordinator, 5s);
  ASSERT_TRUE(running);
  ASSERT_EQ(running->phase, PodPhase::Running);
  caf::anon_send(
      node, kill_atom::value,
      pod_kill_bytes("u1", 0, "preempted by job default/high of higher priority", "Preempted"));
  auto ended = next_report(coordinator, 5s);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->phase, PodPhase::Failed);
  EXPECT_EQ(ended->reason, "Preempted");
  EXPECT_EQ(ended->message, "preempted by job default/high of higher priority");
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

// An evicting kill is durable before the pod ends: a node restarted within the victim's grace
// period kills it again and ends it with the eviction's reason (here the record of a pod killed
// so and still running, as a restart would find it), and the ended pod's record keeps it.
TEST_F(NodeOutbox, AnEvictionOutlivesARestartOfTheNode) {
  ASSERT_TRUE(first_run(600000));
  store_->flush();
  auto stored = store_->get(Family::NodePods, "u1");
  ASSERT_TRUE(stored);
  SmallMessageBuilder b;
  {
    FlatReader reader(*stored);
    b.setRoot(reader.root<store::NodePod>());
  }
  EXPECT_EQ(b.getRoot<store::NodePod>().getEvictReason(), "");
  store_preempted(b);
  auto ended = restart_until_ended("/nonexistent/caldera-shim");
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->phase, PodPhase::Failed);
  EXPECT_EQ(ended->reason, "Preempted");
  EXPECT_EQ(ended->message, "preempted by job default/high of higher priority");
  store_->flush();
  FlatReader reader(*store_->get(Family::NodePods, "u1"));
  EXPECT_EQ(reader.root<store::NodePod>().getEvictReason(), "Preempted");
}

// A real pod that ignores SIGTERM, evicted with a grace of three seconds: its record says why
// (and the grace) before it ends, and it ends Failed with the eviction's reason once the grace
// has run out.
TEST_F(NodeOutbox, AnEvictingKillIsWrittenBeforeTheGraceRunsOut) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys};
  auto real = env(coordinator);
  real.shim_path = CALDERA_SHIM_PATH;
  auto node = spawn_node_actor(sys, real);
  capnp::MallocMessageBuilder b;
  {
    FlatReader reader(sim_launch("u1"));
    b.setRoot(reader.root<cluster::PodLaunch>());
  }
  auto launch = b.getRoot<cluster::PodLaunch>();
  launch.setSimDurationMs(-1);
  launch.setGraceMs(60000);  // the pod's own: the eviction's grace is the kill's
  auto command = launch.getContainers()[0].initCommand(3);
  command.set(0, "sh");
  command.set(1, "-c");
  const auto trapped = (dir_ / "trapped").string();
  command.set(2, "trap '' TERM; touch " + trapped + "; sleep 30");
  caf::anon_send(node, launch_atom::value, to_bytes(b));
  auto running = next_report(coordinator, 10s);
  ASSERT_TRUE(running);
  ASSERT_EQ(running->phase, PodPhase::Running);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(trapped); }, 10s));
  caf::anon_send(node, kill_atom::value,
                 pod_kill_bytes("u1", 3000, "reclaimed by job default/b", "Reclaimed"));
  EXPECT_TRUE(eventually(
      [&] {
        store_->flush();
        auto value = store_->get(Family::NodePods, "u1");
        if (!value) return false;
        FlatReader reader(*value);
        auto np = reader.root<store::NodePod>();
        // Written while it still runs, not only with its end.
        return np.getEvictReason() == "Reclaimed" && np.getEvictGraceMs() == 3000 &&
               decode(np.getStatus()).phase == PodPhase::Running;
      },
      5s));
  // (Its Running report is sent again meanwhile: nothing acknowledges it here.)
  auto ended = next_report(coordinator, 10s);
  while (ended && ended->phase == PodPhase::Running) ended = next_report(coordinator, 10s);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->phase, PodPhase::Failed);
  EXPECT_EQ(ended->reason, "Reclaimed");
  EXPECT_EQ(ended->containers.at(0).exit_code, 128 + 9);  // it outlived its grace
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

// A node that died after spawning a pod's supervisor but before recording it, the pod evicted
// before: restarted, the node ends the pod and claims its dir first, so that the shim still on
// its way (here run by hand, after the restart) finds the claim and runs nothing. Unclaimed, the
// shim would run the evicted pod with nobody watching it.
TEST_F(NodeOutbox, AnEvictedPodWhoseShimWasNeverRecordedDoesNotRunAfterARestart) {
  Container main;
  main.name = "main";
  main.command = {"sh", "-c", "touch " + (dir_ / "ran").string()};
  store_unrecorded_preempted(main);
  auto ended = restart_until_ended(CALDERA_SHIM_PATH);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->phase, PodPhase::Failed);
  EXPECT_EQ(ended->reason, "Preempted");

  int rc = std::system(late_shim(main).c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 3);  // the pod is claimed
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

// The same, but the shim claimed the pod before the node came back: the node adopts it and kills
// it, and the pod ends with the eviction's reason.
TEST_F(NodeOutbox, AnEvictedPodsShimThatClaimedItFirstIsAdoptedAndKilledAfterARestart) {
  Container main;
  main.name = "main";
  main.command = {"sleep", "60"};
  store_unrecorded_preempted(main);
  fs::create_directories(dir_ / "node" / "pods");
  ASSERT_EQ(std::system((late_shim(main) + " > /dev/null 2>&1 &").c_str()), 0);
  pod_dir::ShimState claim;
  ASSERT_TRUE(eventually(
      [&] {
        auto text = pod_dir::read_file((dir_ / "node" / "pods" / "u1" / "state").string());
        claim = pod_dir::parse_state(text ? *text : "", 1);
        return claim.running;
      },
      5s));
  auto ended = restart_until_ended(CALDERA_SHIM_PATH);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->phase, PodPhase::Failed);
  EXPECT_EQ(ended->reason, "Preempted");
  EXPECT_TRUE(eventually(
      [&] {
        auto stat = pod_dir::read_file("/proc/" + std::to_string(claim.shim_pid) + "/stat");
        auto parsed = stat ? testing::parse_proc_stat(*stat) : std::nullopt;
        return !parsed || parsed->state == "Z";  // gone, or ended and not yet reaped by init
      },
      5s));
}

// A hollow node keeps its records under "<node>/<uid>": the same node, real and started on that
// data dir, deletes them (they were simulated, nothing of them runs) and leaves its own.
TEST_F(NodeOutbox, ARealNodeDeletesTheHollowRecordsLeftOnItsDataDir) {
  ASSERT_TRUE(first_run(60000, "h-0", true));
  ASSERT_TRUE(store_->get(Family::NodePods, "h-0/u1").has_value());
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys};
  auto node = spawn_node_actor(sys, env(coordinator));  // n1, real
  EXPECT_TRUE(eventually(
      [&] {
        store_->flush();
        return !store_->get(Family::NodePods, "h-0/u1").has_value();
      },
      5s));
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

TEST_F(NodeOutbox, AReportIsSentAgainUntilItsJobAcknowledgesThatStatus) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys};
  auto node = spawn_node_actor(sys, env(coordinator));
  caf::anon_send(node, launch_atom::value, sim_launch("u1", 50));
  auto running = next_report(coordinator, 5s);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->phase, PodPhase::Running);
  EXPECT_EQ(running->status_seq, 1u);
  auto ended = next_report(coordinator, 5s);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->phase, PodPhase::Succeeded);
  EXPECT_EQ(ended->status_seq, 2u);
  // Unacknowledged: the latest status comes again, and again.
  for (int i = 0; i < 2; ++i) {
    auto again = next_report(coordinator, 2s);
    ASSERT_TRUE(again) << "resend " << i;
    EXPECT_EQ(again->status_seq, 2u);
    EXPECT_EQ(again->phase, PodPhase::Succeeded);
  }
  // An acknowledgement of the older status does not cover the newer one.
  caf::anon_send(node, ack_atom::value, acks("u1", 1));
  auto still = next_report(coordinator, 2s);
  ASSERT_TRUE(still);
  EXPECT_EQ(still->status_seq, 2u);
  caf::anon_send(node, ack_atom::value, acks("u1", 2));
  // A resend already on its way may cross the acknowledgement; after it, nothing for many
  // resend periods.
  next_report(coordinator, 150ms);
  EXPECT_FALSE(next_report(coordinator, 1s)) << "acknowledged, yet sent again";
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

TEST_F(NodeOutbox, StatusNumbersAreDurableAndJumpPastTheLastRunsAfterARestart) {
  {
    auto running = first_run(60000);
    ASSERT_TRUE(running);
    EXPECT_EQ(running->status_seq, 1u);
  }
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys};
  auto node = spawn_node_actor(sys, env(coordinator));
  // Its registration carries the pod's status with the number it had.
  std::optional<Pod> registered;
  coordinator->receive(
      [&](register_atom, const std::string& bytes, const caf::actor&) {
        FlatReader reader(bytes);
        auto pods = reader.root<cluster::NodeRegistration>().getPods();
        ASSERT_EQ(pods.size(), 1u);
        registered = decode(pods[0].getPod());
      },
      caf::after(5s) >> [] { ADD_FAILURE() << "no registration"; });
  ASSERT_TRUE(registered);
  EXPECT_EQ(registered->status_seq, 1u);
  EXPECT_EQ(registered->phase, PodPhase::Running);
  // Its next status is numbered after it.
  caf::anon_send(node, kill_atom::value, pod_kill_bytes("u1", 0, ""));
  auto killed = next_report(coordinator, 5s);
  ASSERT_TRUE(killed);
  EXPECT_EQ(killed->phase, PodPhase::Failed);
  // Past any number the first run may have sent without making it durable.
  EXPECT_GT(killed->status_seq, uint64_t{1} << 32);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace caldera
