// The directory's watch registry: which watch wants which object, its limit, and its events.
#include "actors/watch/watchers.hpp"

#include <gtest/gtest.h>

#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

Watcher watcher(uint64_t stream, WatchKind kind, std::string ns = {}, std::string name = {}) {
  Watcher w;
  w.stream = stream;
  w.request_id = stream * 10;
  w.kind = kind;
  w.ns = std::move(ns);
  w.name = std::move(name);
  return w;
}

TEST(Watchers, KindsAreKubectlsNames) {
  EXPECT_EQ(*parse_watch_kind("jobs"), WatchKind::Jobs);
  EXPECT_EQ(*parse_watch_kind("vcjob"), WatchKind::Jobs);
  EXPECT_EQ(*parse_watch_kind("po"), WatchKind::Pods);
  EXPECT_EQ(*parse_watch_kind("jobflows"), WatchKind::JobFlows);
  auto bad = parse_watch_kind("nodes");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("jobs, jobs.batch, pods and jobflows"), std::string::npos);
}

TEST(Watchers, AWatchWantsItsNamespaceAndName) {
  EXPECT_TRUE(watches(watcher(1, WatchKind::Jobs), "a/x"));
  EXPECT_TRUE(watches(watcher(1, WatchKind::Jobs, "a"), "a/x"));
  EXPECT_FALSE(watches(watcher(1, WatchKind::Jobs, "a"), "ab/x"))
      << "a prefix is not the namespace";
  EXPECT_FALSE(watches(watcher(1, WatchKind::Jobs, "ab"), "a/x"));
  EXPECT_TRUE(watches(watcher(1, WatchKind::Jobs, "a", "x"), "a/x"));
  EXPECT_FALSE(watches(watcher(1, WatchKind::Jobs, "a", "x"), "a/xy"));
  EXPECT_FALSE(watches(watcher(1, WatchKind::Jobs, "a", "xy"), "a/x"));
}

TEST(Watchers, EachKindIsCountedAndOnlyItsWatchesHearOfIt) {
  Watchers ws;
  ASSERT_TRUE(ws.add(watcher(1, WatchKind::Jobs, "a")));
  ASSERT_TRUE(ws.add(watcher(2, WatchKind::Pods)));
  ASSERT_TRUE(ws.add(watcher(3, WatchKind::Jobs, "b")));
  EXPECT_FALSE(ws.add(watcher(3, WatchKind::Jobs))) << "the same stream twice";
  EXPECT_EQ(ws.count(WatchKind::Jobs), 2u);
  EXPECT_EQ(ws.count(WatchKind::Pods), 1u);
  EXPECT_EQ(ws.count(WatchKind::JobFlows), 0u);
  std::vector<uint64_t> heard;
  ws.for_each(WatchKind::Jobs, "b/x", [&](Watcher& w) { heard.push_back(w.stream); });
  EXPECT_EQ(heard, std::vector<uint64_t>{3});
  ws.remove({}, 3);
  EXPECT_EQ(ws.count(WatchKind::Jobs), 1u);
  ws.remove_bridge({});
  EXPECT_TRUE(ws.empty());
  EXPECT_EQ(ws.count(WatchKind::Pods), 0u);
}

TEST(Watchers, TheLimitIsRefusedWithWhy) {
  Watchers ws;
  for (uint64_t i = 1; i <= Watchers::kMaxWatchers; ++i)
    ASSERT_TRUE(ws.add(watcher(i, WatchKind::Jobs)));
  auto over = ws.add(watcher(Watchers::kMaxWatchers + 1, WatchKind::Jobs));
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().find(std::to_string(Watchers::kMaxWatchers) + " watches"),
            std::string::npos);
  ws.remove({}, 1);
  EXPECT_TRUE(ws.add(watcher(Watchers::kMaxWatchers + 1, WatchKind::Jobs)));
}

TEST(Watchers, EventsCarryTheWatchsIdAndType) {
  JobFlow flow;
  flow.spec.name = "f";
  flow.spec.namespace_ = "a";
  auto bytes = watch_flow_event(7, api::WatchEvent::Type::DELETED, flow);
  FlatReader reader(bytes);
  auto r = reader.root<api::Response>();
  EXPECT_EQ(r.getId(), 7u);
  ASSERT_TRUE(r.isEvent());
  EXPECT_EQ(r.getEvent().getType(), api::WatchEvent::Type::DELETED);
  EXPECT_EQ(std::string(r.getEvent().getJobFlow().getSpec().getName().cStr()), "f");
  FlatReader synced(watch_synced(8));
  EXPECT_EQ(synced.root<api::Response>().getEvent().getType(), api::WatchEvent::Type::SYNCED);
}

}  // namespace
}  // namespace caldera
