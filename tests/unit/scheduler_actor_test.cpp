// The scheduler actor on a real actor system: a gang that waits is told why at once, a newer
// reason at most once per second (each is a durable write of the job), and its bindings once it
// fits.
#include "actors/scheduler/scheduler_actor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

using namespace std::chrono;

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}, {"pods", 110000}}};
}

GangRequest gang(const std::string& key, int pods, MilliValue each) {
  GangRequest r;
  r.job_key = key;
  for (int i = 0; i < pods; ++i)
    r.pods.push_back(
        {key + "-" + std::to_string(i), ResourceList{{{"cpu", each}, {"pods", 1000}}}, "w"});
  r.min_count = pods;
  r.created_ms = 1;
  return r;
}

TEST(SchedulerActor, AWaitingGangHearsWhyAtOnceAndANewerReasonAtMostOncePerSecond) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto scheduler = spawn_scheduler(sys);
  caf::scoped_actor job{sys};
  const std::map<std::string, std::string> no_labels;
  job->send(scheduler, capacity_atom::value, std::string("n1"), cpu(1000), true,
            std::string("127.0.0.1"), no_labels);
  job->send(scheduler, place_atom::value, gang("default/g", 2, 1000));
  auto next_reason = [&](std::string& why) {
    bool got = false;
    job->receive([&](unsched_atom, const std::string& w, bool) { why = w, got = true; },
                 caf::after(seconds(10)) >> [] {});
    return got;
  };
  std::string why;
  ASSERT_TRUE(next_reason(why));
  EXPECT_EQ(why,
            "1/2 tasks in gang unschedulable: 1 node: insufficient cpu; minAvailable 2 needs cpu "
            "2, the ready nodes have 1 in all");
  const auto first = steady_clock::now();

  // A second node changes the reason (two nodes now refuse the second pod)...
  job->send(scheduler, capacity_atom::value, std::string("n2"), cpu(500), true,
            std::string("127.0.0.2"), no_labels);
  ASSERT_TRUE(next_reason(why));
  // ...which comes at the end of the first reason's second, not before.
  EXPECT_GE(steady_clock::now() - first, milliseconds(500));
  EXPECT_EQ(why,
            "1/2 tasks in gang unschedulable: 2 nodes: insufficient cpu; minAvailable 2 needs cpu "
            "2, the ready nodes have 1500m in all");

  // Room for the whole gang: its bindings come, and no more reasons.
  job->send(scheduler, capacity_atom::value, std::string("n2"), cpu(1000), true,
            std::string("127.0.0.2"), no_labels);
  bool placed = false;
  job->receive([&](placed_atom, const std::vector<Binding>& b) { placed = b.size() == 2; },
               [&](unsched_atom, const std::string& w, bool) { ADD_FAILURE() << w; },
               caf::after(seconds(10)) >> [] {});
  EXPECT_TRUE(placed);
  caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
}

// A victim whose job never asked this scheduler (its pods adopted after a restart) is evicted
// through its node: a kill with the eviction's reason, so that it still ends Preempted.
TEST(SchedulerActor, AnAdoptedVictimIsEvictedThroughItsNode) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto scheduler = spawn_scheduler(sys);
  caf::scoped_actor nodes{sys}, job{sys};
  job->send(scheduler, membership_atom::value, caf::actor_cast<caf::actor>(nodes));
  job->send(scheduler, capacity_atom::value, std::string("n1"), cpu(2000), true,
            std::string("127.0.0.1"), std::map<std::string, std::string>{});
  for (int i = 0; i < 4; ++i)
    job->send(scheduler, reserve_atom::value, std::string("default/low"),
              "low-" + std::to_string(i), std::string("n1"),
              ResourceList{{{"cpu", 500}, {"pods", 1000}}}, PodGroupInfo{kDefaultQueue, "", 2});
  PriorityClass high;
  high.name = "high";
  high.value = 100;
  job->send(scheduler, queues_atom::value, std::vector<Queue>{}, std::vector<PriorityClass>{high});
  auto preemptor = gang("default/high", 2, 500);
  preemptor.group = {kDefaultQueue, "high", 2};
  job->send(scheduler, place_atom::value, preemptor);
  std::set<std::string> killed;
  for (int i = 0; i < 2; ++i)
    nodes->receive(
        [&](kill_atom, const std::string& node, const std::string& bytes) {
          EXPECT_EQ(node, "n1");
          FlatReader reader(bytes);
          auto k = reader.root<cluster::PodKill>();
          EXPECT_EQ(std::string(k.getEvictReason().cStr()), "Preempted");
          EXPECT_EQ(std::string(k.getReason().cStr()),
                    "preempted by job default/high of higher priority");
          killed.insert(k.getUid());
        },
        caf::after(seconds(10)) >> [] { ADD_FAILURE() << "no kill"; });
  EXPECT_EQ(killed.size(), 2u);  // low keeps its minAvailable of 2
  caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace caldera
