// The node actor against a store whose writes fail at will (a full disk, then space again): what
// it keeps, and what it writes again once it can. Simulated pods: no processes.
#include "actors/node/node_actor.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <capnp/message.h>
#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec.hpp"
#include "messages/flat.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Every commit is recorded with whether it "worked"; while failing, commits fail as a full disk
// makes them fail and writable() says so.
class FailingStore : public Store {
 public:
  std::atomic<bool> failing{false};

  void commit(std::vector<Write> writes, std::function<void(std::string error)> done) override {
    const bool fail = failing;
    {
      std::lock_guard lock(mutex_);
      for (auto& w : writes) commits_.push_back({std::move(w), !fail});
    }
    if (done) done(fail ? "IO error: No space left on device" : "");
  }
  std::optional<std::string> get(Family, std::string_view) override { return std::nullopt; }
  void scan(Family, const std::function<void(std::string_view, std::string_view)>&) override {}
  void flush() override {}
  StoreStats stats() const override { return {}; }
  bool writable() const override { return !failing; }
  StoreHealth health() const override { return {}; }

  // Deletes of the key, those that worked or those that failed.
  size_t deletes(const std::string& key, bool worked) {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const auto& [w, ok] : commits_) n += w.key == key && !w.value && ok == worked;
    return n;
  }
  size_t puts(const std::string& key) {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const auto& [w, ok] : commits_) n += w.key == key && w.value && ok;
    return n;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<Write, bool>> commits_;
};

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::string sim_launch(const std::string& uid) {
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
  l.setSimDurationMs(0);
  return to_bytes(b);
}

// A pod's record whose delete failed used to stay, with its logs, until the node restarted
// (unless its status had failed to be written too): now the delete is made again once the store
// can write, and the logs go then.
TEST(NodeActor, AFailedDeleteIsMadeAgainOnceTheStoreCanWrite) {
  char tmpl[] = "/tmp/caldera-node-actor-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path root = tmpl;
  auto store = std::make_shared<FailingStore>();
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    caf::scoped_actor coordinator{sys};  // its mailbox takes the reports, unread
    NodeActorEnv env;
    env.name = "n1";
    env.data_dir = root.string();
    env.shim_path = "/nonexistent/caldera-shim";
    env.store = store;
    env.coordinator = caf::actor_cast<caf::actor>(coordinator);
    auto node = spawn_node_actor(sys, env);

    caf::anon_send(node, launch_atom::value, sim_launch("u1"));
    // Recorded, Running, then Succeeded.
    ASSERT_TRUE(eventually([&] { return store->puts("u1") >= 3; }, 5s));
    const fs::path pod_dir = root / "pods" / "u1";
    fs::create_directories(pod_dir);
    std::ofstream(pod_dir / "main.log") << "its logs\n";

    store->failing = true;
    caf::anon_send(node, remove_atom::value, std::string("u1"));
    ASSERT_TRUE(eventually([&] { return store->deletes("u1", false) >= 1; }, 5s));
    std::this_thread::sleep_for(1500ms);  // a retry while still failing must not give up
    EXPECT_TRUE(fs::exists(pod_dir / "main.log"));
    EXPECT_EQ(store->deletes("u1", true), 0u);

    store->failing = false;
    EXPECT_TRUE(eventually([&] { return store->deletes("u1", true) == 1; }, 5s));
    EXPECT_TRUE(eventually([&] { return !fs::exists(pod_dir); }, 5s));
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace caldera
