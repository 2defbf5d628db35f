// The job actor on a real store, its peers played by scoped actors: a node's report is
// acknowledged only once the status it carries is durable in the job's records, and a repeat is
// acknowledged again without being applied twice (DESIGN rule 5).
#include "actors/job/job_actor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include <capnp/message.h>
#include <caf/all.hpp>

#include "actors/job/job_record.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "job_test_support.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "temp_store.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;
using testing::spec_with;
using testing::test_clock;

class JobActorTest : public testing::TempStoreTest {
 protected:
  // The pod's row as the store holds it now.
  std::optional<Pod> stored_pod(const std::string& name) {
    auto row = store_->get(Family::Pods, pod_row_key("default/job", name));
    if (!row) return std::nullopt;
    auto pod = decode_pod_row(*row);
    if (!pod.ok()) return std::nullopt;
    return pod.value();
  }
};

std::string report_bytes(const Pod& pod) {
  SmallMessageBuilder b;
  auto r = b.initRoot<cluster::PodReport>();
  encode(pod, r.initPod());
  return to_bytes(b);
}

TEST_F(JobActorTest, AReportIsAcknowledgedOnceItsStatusIsDurableAndARepeatAgain) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor coordinator{sys}, scheduler{sys}, nodes{sys}, client{sys};
  JobActorEnv env;
  env.store = store_;
  env.coordinator = caf::actor_cast<protocol::directory>(coordinator);
  env.scheduler = caf::actor_cast<protocol::scheduler>(scheduler);
  env.nodes = caf::actor_cast<protocol::membership>(nodes);
  auto job = spawn_job_actor(sys, new_job(spec_with({{"w", 1}}), "job-uid", test_clock()), env);
  bool created = false;
  client->request(job, 5s, create_atom::value)
      .receive([&](const std::string& record) { created = !record.empty(); },
               [&](const caf::error& e) { ADD_FAILURE() << sys.render(e); });
  ASSERT_TRUE(created);

  // The scheduler is asked for the gang and binds its pod to n1; the pod is launched there.
  std::string uid;
  scheduler->receive([&](place_atom, const GangRequest& r) { uid = r.pods.at(0).uid; },
                     caf::after(5s) >> [] { ADD_FAILURE() << "no placement request"; });
  ASSERT_FALSE(uid.empty());
  caf::anon_send(job, placed_atom::value,
                 std::vector<Binding>{{"default/job", uid, "n1", "10.0.0.1", {}}});
  Pod pod;
  nodes->receive(
      [&](launch_atom, const std::string& node, const std::string& bytes) {
        EXPECT_EQ(node, "n1");
        FlatReader reader(bytes);
        pod = decode(reader.root<cluster::PodLaunch>().getPod());
      },
      caf::after(5s) >> [] { ADD_FAILURE() << "no launch"; });
  ASSERT_EQ(pod.uid, uid);

  pod.phase = PodPhase::Succeeded;
  pod.node = "n1";
  pod.status_seq = 4;
  ContainerStatus c;
  c.name = "main";
  c.state = ContainerState::Terminated;
  pod.containers = {c};
  for (int round = 0; round < 2; ++round) {
    caf::anon_send(job, report_atom::value, report_bytes(pod));
    bool acked = false;
    nodes->receive(
        [&](ack_atom, const std::string& node, const std::string& acked_uid, uint64_t seq) {
          acked = true;
          EXPECT_EQ(node, "n1");
          EXPECT_EQ(acked_uid, uid);
          EXPECT_EQ(seq, 4u);
          // Acknowledged means durable: the job's row for the pod holds this very status.
          auto stored = stored_pod(pod.name);
          ASSERT_TRUE(stored);
          EXPECT_EQ(stored->phase, PodPhase::Succeeded);
          EXPECT_EQ(stored->status_seq, 4u);
        },
        caf::after(5s) >> [] {});
    EXPECT_TRUE(acked) << "round " << round;
  }
  // The ended pod's room goes back to the scheduler, sent as the report came in (its node freed
  // it as the pod ended), and once: the repeat released nothing.
  std::vector<std::vector<std::string>> released;
  auto take_releases = [&](std::chrono::milliseconds wait) {
    for (bool got = true; got;) {
      got = false;
      scheduler->receive(
          [&](release_atom, const std::vector<std::string>& uids) {
            released.push_back(uids);
            got = true;
          },
          caf::after(wait) >> [] {});
      wait = 0ms;
    }
  };
  take_releases(5s);
  EXPECT_EQ(released, (std::vector<std::vector<std::string>>{{uid}}));
  // The repeat was not applied again: one PodSucceeded's worth of events, no second write.
  auto stats = store_->stats();
  caf::anon_send(job, report_atom::value, report_bytes(pod));
  nodes->receive([](ack_atom, const std::string&, const std::string&, uint64_t) {},
                 caf::after(5s) >> [] { ADD_FAILURE() << "no acknowledgement"; });
  store_->flush();
  EXPECT_EQ(store_->stats().writes, stats.writes) << "a repeated report was written again";
  take_releases(0ms);  // sent before its acknowledgement, had the repeat released anything
  EXPECT_EQ(released.size(), 1u) << "a repeated report released the pod again";
  caf::anon_send_exit(job, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace caldera
