#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <rocksdb/db.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "storage/store.hpp"

namespace caldera::store_test {
namespace {

template <class Pred>
bool eventually_true(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

Write put(Family f, std::string key, std::string value) {
  return Write{f, std::move(key), std::move(value)};
}
Write del(Family f, std::string key) {
  return Write{f, std::move(key), std::nullopt};
}

// Commits and waits for the outcome, so a test can check it.
std::string commit_sync(caldera::Store& s, std::vector<Write> writes) {
  std::string result = "done not called";
  s.commit(std::move(writes), [&](std::string e) { result = std::move(e); });
  s.flush();
  return result;
}

// Holds the store's writer thread inside a done callback (of a write to Meta "gate") until
// open(), so that the commits made meanwhile queue up and share the next batch.
class WriterGate {
 public:
  explicit WriterGate(caldera::Store& s) {
    s.commit({put(Family::Meta, "gate", "g")}, [this](std::string) {
      std::unique_lock lock(mu_);
      entered_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
    });
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return entered_; });
  }
  ~WriterGate() { open(); }
  void open() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
};

class Store : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/caldera-store-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = std::string(tmpl) + "/db";
  }
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::path(dir_).parent_path());
  }

  std::unique_ptr<caldera::Store> open(StoreOptions options = {}) {
    auto r = caldera::Store::open(dir_, options);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
    return r.ok() ? std::move(r.value()) : nullptr;
  }

  std::string dir_;
};

TEST_F(Store, PutGetDeleteAcrossFamilies) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(commit_sync(*s, {put(Family::Jobs, "k", "job"), put(Family::NodePods, "k", "pod"),
                             put(Family::Meta, "k", "meta")}),
            "");
  EXPECT_EQ(s->get(Family::Jobs, "k"), "job");
  EXPECT_EQ(s->get(Family::NodePods, "k"), "pod");
  EXPECT_EQ(s->get(Family::Meta, "k"), "meta");
  EXPECT_EQ(s->get(Family::Jobs, "missing"), std::nullopt);

  EXPECT_EQ(commit_sync(*s, {del(Family::NodePods, "k"), put(Family::Jobs, "k", "job2")}), "");
  EXPECT_EQ(s->get(Family::NodePods, "k"), std::nullopt);
  EXPECT_EQ(s->get(Family::Jobs, "k"), "job2");
  EXPECT_EQ(s->get(Family::Meta, "k"), "meta");
  EXPECT_EQ(s->stats().commits, 2u);
  EXPECT_EQ(s->stats().writes, 5u);
}

TEST_F(Store, ScanVisitsOneFamilyInKeyOrder) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(commit_sync(*s, {put(Family::Jobs, "ns/c", "3"), put(Family::Jobs, "ns/a", "1"),
                             put(Family::Jobs, "ns/b", "2"), put(Family::Meta, "ns/0", "x"),
                             put(Family::Jobs, std::string("ns/\0z", 5), "0")}),
            "");
  std::vector<std::pair<std::string, std::string>> seen;
  s->scan(Family::Jobs, [&](std::string_view k, std::string_view v) { seen.emplace_back(k, v); });
  std::vector<std::pair<std::string, std::string>> want{
      {std::string("ns/\0z", 5), "0"}, {"ns/a", "1"}, {"ns/b", "2"}, {"ns/c", "3"}};
  EXPECT_EQ(seen, want);
  int pods = 0;
  s->scan(Family::NodePods, [&](std::string_view, std::string_view) { ++pods; });
  EXPECT_EQ(pods, 0);
}

// A corrupt block (or an I/O error) stops RocksDB's iterator as the end would: the recovery scan
// used to return fewer records without a word. Now it says why it stopped, and the store's
// owner is told (calderad stops rather than serve part of its state).
TEST_F(Store, AScanThatMeetsACorruptBlockSaysSoInsteadOfEndingEarly) {
  std::string value(1000, 'v');
  uint64_t noise = 88172645463325252ull;  // values that do not compress into one block
  {
    auto s = open();
    ASSERT_TRUE(s);
    std::vector<Write> writes;
    for (int i = 0; i < 3000; ++i) {
      for (auto& c : value) {
        noise ^= noise << 13, noise ^= noise >> 7, noise ^= noise << 17;
        c = static_cast<char>('a' + noise % 26);
      }
      writes.push_back(put(Family::Jobs, "job/" + std::to_string(100000 + i), value));
    }
    ASSERT_EQ(commit_sync(*s, std::move(writes)), "");
  }
  ASSERT_TRUE(open());  // the reopen writes the log's records into a table file
  std::filesystem::path table;
  std::string files;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    files += e.path().filename().string() + " ";
    if (e.path().extension() == ".sst" && std::filesystem::file_size(e.path()) > 1000000)
      table = e.path();
  }
  ASSERT_FALSE(table.empty()) << "no table file of the records: " << files;
  {
    std::fstream f(table, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(table) / 2));
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  std::string told;
  auto s = open(StoreOptions{.on_damaged = [&](const std::string& e) { told = e; }});
  ASSERT_TRUE(s);
  size_t seen = 0;
  auto error = s->scan(Family::Jobs, [&](std::string_view, std::string_view) { ++seen; });
  EXPECT_LT(seen, 3000u);
  EXPECT_NE(error.find("reading jobs stopped after " + std::to_string(seen) + " records"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("Corruption"), std::string::npos) << error;
  EXPECT_EQ(told, error);
  // A read of a record in the corrupt block is no "not found" either.
  told.clear();
  for (int i = 0; i < 3000 && told.empty(); ++i)
    s->get(Family::Jobs, "job/" + std::to_string(100000 + i));
  EXPECT_NE(told.find("Corruption"), std::string::npos) << told;
  EXPECT_EQ(s->scan(Family::Meta, [](std::string_view, std::string_view) {}), "");
}

TEST_F(Store, PersistsAcrossCloseAndReopen) {
  {
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_EQ(commit_sync(*s, {put(Family::Jobs, "a", "1"), put(Family::Meta, "m", "2")}), "");
    EXPECT_EQ(commit_sync(*s, {del(Family::Jobs, "a"), put(Family::Jobs, "b", "3")}), "");
  }
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->get(Family::Jobs, "a"), std::nullopt);
  EXPECT_EQ(s->get(Family::Jobs, "b"), "3");
  EXPECT_EQ(s->get(Family::Meta, "m"), "2");
}

TEST_F(Store, BatchAcrossFamiliesIsVisibleAfterReopen) {
  std::vector<Write> batch;
  for (int i = 0; i < 50; ++i) {
    batch.push_back(put(Family::Jobs, "job" + std::to_string(i), "j"));
    batch.push_back(put(Family::NodePods, "pod" + std::to_string(i), "p"));
  }
  batch.push_back(put(Family::Meta, "epoch", "7"));
  {
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_EQ(commit_sync(*s, batch), "");
    EXPECT_EQ(s->stats().batches, 1u);
  }
  auto s = open();
  ASSERT_TRUE(s);
  for (const auto& w : batch) EXPECT_EQ(s->get(w.family, w.key), w.value) << w.key;
}

TEST_F(Store, OpensDatabaseWithFamiliesItDoesNotKnow) {
  {
    // A newer binary's database: an extra column family holding data.
    rocksdb::Options o;
    o.create_if_missing = true;
    std::filesystem::create_directories(dir_);
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir_, &db).ok());
    rocksdb::ColumnFamilyHandle* cf = nullptr;
    ASSERT_TRUE(db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), "flows_v9", &cf).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), cf, "f", "1").ok());
    db->DestroyColumnFamilyHandle(cf);
    delete db;
  }
  {
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_EQ(commit_sync(*s, {put(Family::Jobs, "a", "1")}), "");
  }
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->get(Family::Jobs, "a"), "1");
}

TEST_F(Store, TemplatesAndFlowsFamiliesPutGetScanAndReopen) {
  {
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_EQ(commit_sync(
                  *s, {put(Family::Templates, "default/b", "tb"),
                       put(Family::Templates, "default/a", "ta"),
                       put(Family::Flows, "default/a", "fa"), put(Family::Jobs, "default/a", "j")}),
              "");
    EXPECT_EQ(s->get(Family::Templates, "default/a"), "ta");
    EXPECT_EQ(s->get(Family::Flows, "default/a"), "fa");
    EXPECT_EQ(s->get(Family::Flows, "default/b"), std::nullopt);
    EXPECT_EQ(commit_sync(*s, {del(Family::Templates, "default/b")}), "");
  }
  auto s = open();
  ASSERT_TRUE(s);
  std::vector<std::pair<std::string, std::string>> templates, flows;
  s->scan(Family::Templates,
          [&](std::string_view k, std::string_view v) { templates.emplace_back(k, v); });
  s->scan(Family::Flows, [&](std::string_view k, std::string_view v) { flows.emplace_back(k, v); });
  EXPECT_EQ(templates, (std::vector<std::pair<std::string, std::string>>{{"default/a", "ta"}}));
  EXPECT_EQ(flows, (std::vector<std::pair<std::string, std::string>>{{"default/a", "fa"}}));
  EXPECT_EQ(s->get(Family::Jobs, "default/a"), "j");
}

TEST_F(Store, OpensADatabaseFromBeforeTemplatesAndFlows) {
  {
    // What an older calderad left: only the jobs, node_pods and meta families.
    rocksdb::DBOptions o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    std::filesystem::create_directories(dir_);
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const char* name :
         {rocksdb::kDefaultColumnFamilyName.c_str(), "jobs", "node_pods", "meta"})
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir_, families, &handles, &db).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), handles[1], "default/old", "job").ok());
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
  {
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->get(Family::Jobs, "default/old"), "job");
    int templates = 0;
    s->scan(Family::Templates, [&](std::string_view, std::string_view) { ++templates; });
    EXPECT_EQ(templates, 0);
    EXPECT_EQ(commit_sync(*s, {put(Family::Flows, "default/f", "flow")}), "");
  }
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->get(Family::Flows, "default/f"), "flow");
  EXPECT_EQ(s->get(Family::Jobs, "default/old"), "job");
}

TEST_F(Store, DoneCallbacksRunInSubmissionOrder) {
  auto s = open();
  ASSERT_TRUE(s);
  std::vector<int> order;  // only touched by the writer thread until flush() returns
  for (int i = 0; i < 300; ++i) {
    s->commit({put(Family::Jobs, "k" + std::to_string(i), "v")}, [&order, i](std::string e) {
      EXPECT_EQ(e, "");
      order.push_back(i);
    });
  }
  s->flush();
  ASSERT_EQ(order.size(), 300u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(order[i], i);
}

TEST_F(Store, GroupCommitSharesSyncsAcrossThreads) {
  auto s = open(StoreOptions{.sync = true});
  ASSERT_TRUE(s);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 500;
  std::vector<std::atomic<int>> calls(kThreads * kPerThread);
  std::vector<int> next_done(kThreads, 0);  // per-thread order, checked on the writer thread
  std::atomic<int> out_of_order{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string key = "t" + std::to_string(t) + "/" + std::to_string(i);
        s->commit({put(Family::Jobs, key, "v"), put(Family::Meta, key, "m")},
                  [&, t, i](std::string e) {
                    EXPECT_EQ(e, "");
                    calls[t * kPerThread + i].fetch_add(1);
                    if (next_done[t]++ != i) out_of_order.fetch_add(1);
                  });
      }
    });
  }
  for (auto& th : threads) th.join();
  s->flush();
  for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i].load(), 1) << "commit " << i;
  EXPECT_EQ(out_of_order.load(), 0);
  auto st = s->stats();
  EXPECT_EQ(st.commits, uint64_t{kThreads * kPerThread});
  EXPECT_EQ(st.writes, uint64_t{2 * kThreads * kPerThread});
  EXPECT_LT(st.batches, st.commits / 4) << "batches " << st.batches;
  EXPECT_EQ(s->get(Family::Meta, "t7/499"), "m");
}

TEST_F(Store, BatchesRespectMaxWritesWithoutSplittingACommit) {
  auto s = open(StoreOptions{.sync = false, .max_batch_writes = 10});
  ASSERT_TRUE(s);
  // Hold the writer inside the first done callback, so that everything after it queues up.
  WriterGate gate(*s);
  for (int i = 0; i < 20; ++i) {
    std::vector<Write> w;
    for (int j = 0; j < 4; ++j) w.push_back(put(Family::Jobs, std::to_string(i * 4 + j), "v"));
    s->commit(std::move(w), nullptr);
  }
  std::vector<Write> big;
  for (int j = 0; j < 25; ++j) big.push_back(put(Family::NodePods, "big" + std::to_string(j), "v"));
  s->commit(std::move(big), nullptr);
  gate.open();
  s->flush();
  auto st = s->stats();
  // gate alone; then 20 commits of 4 at two per batch; then the oversized commit whole.
  EXPECT_EQ(st.batches, 1u + 10u + 1u);
  EXPECT_EQ(st.commits, 22u);
  EXPECT_EQ(st.writes, 1u + 80u + 25u);
  EXPECT_EQ(s->get(Family::NodePods, "big24"), "v");
}

TEST_F(Store, DestructorDrainsTheQueue) {
  constexpr int kCommits = 1000;
  std::atomic<int> done{0};
  {
    auto s = open(StoreOptions{.sync = true});
    ASSERT_TRUE(s);
    for (int i = 0; i < kCommits; ++i) {
      s->commit({put(Family::Jobs, "k" + std::to_string(i), std::to_string(i))},
                [&](std::string e) {
                  EXPECT_EQ(e, "");
                  done.fetch_add(1);
                });
    }
  }
  EXPECT_EQ(done.load(), kCommits);
  auto s = open();
  ASSERT_TRUE(s);
  int found = 0;
  s->scan(Family::Jobs, [&](std::string_view, std::string_view) { ++found; });
  EXPECT_EQ(found, kCommits);
}

TEST_F(Store, SecondOpenOfSameDirFailsWithLockMessage) {
  auto first = open();
  ASSERT_TRUE(first);
  auto second = caldera::Store::open(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().find("in use by another process"), std::string::npos) << second.error();
  EXPECT_NE(second.error().find("LOCK"), std::string::npos) << second.error();
  EXPECT_EQ(second.error().find("read-only"), std::string::npos) << second.error();
}

// A lock held by another process: reported as such, not as a dir it cannot write.
TEST_F(Store, OpenWhileAnotherProcessHoldsTheDirSaysItIsInUse) {
  std::filesystem::create_directories(dir_);
  int ready[2], quit[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(quit), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    close(quit[1]);  // else its own copy would keep the read below from ever seeing EOF
    auto r = caldera::Store::open(dir_);
    char c = r.ok() ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    (void)!read(quit[0], &c, 1);  // until the parent is done, or gone
    _exit(0);
  }
  close(ready[1]);
  close(quit[0]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  auto second = caldera::Store::open(dir_);
  close(quit[1]);
  close(ready[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(c, 'y');
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().find("is in use by another process"), std::string::npos)
      << second.error();
  EXPECT_EQ(second.error().find("read-only"), std::string::npos) << second.error();
}

// Sets or clears the immutable attribute (chattr +i): nobody, root included, may then create,
// remove or rename in a directory. False where the filesystem or the capabilities do not allow it.
bool set_immutable(const std::string& path, bool on) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  if (ok) {
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    ok = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  }
  ::close(fd);
  return ok;
}

// The case: a data dir the process may not write was reported as one whose LOCK another
// process held. Root may write past the mode bits, so an immutable dir stands for it here: empty
// (creating LOCK fails) and holding a database (the LOCK is taken, creating the WAL fails).
TEST_F(Store, OpenOfADirItCannotWriteSaysReadOnlyNotInUse) {
  const std::string empty = dir_ + "-empty";
  std::filesystem::create_directories(empty);
  { ASSERT_TRUE(open()); }  // a database in dir_, closed again
  if (!set_immutable(empty, true)) GTEST_SKIP() << "cannot chattr +i here: " << strerror(errno);
  bool db_immutable = set_immutable(dir_, true);
  auto in_empty = caldera::Store::open(empty);
  auto in_db = caldera::Store::open(dir_);
  set_immutable(empty, false);
  set_immutable(dir_, false);
  ASSERT_TRUE(db_immutable);
  for (const auto& [dir, r] : {std::pair{empty, &in_empty}, std::pair{dir_, &in_db}}) {
    SCOPED_TRACE(dir);
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(
        r->error().rfind(
            "data dir '" + dir + "' is read-only (or not writable by this user): IO error: ", 0),
        0u)
        << r->error();
    EXPECT_NE(r->error().find("Operation not permitted"), std::string::npos) << r->error();
    EXPECT_EQ(r->error().find("in use"), std::string::npos) << r->error();
  }
  EXPECT_TRUE(open());  // writable again: it opens
}

// A user who may not write the dir (or its LOCK): EACCES. As root, the open runs in a child that
// has become nobody.
TEST_F(Store, OpenByAUserWhoCannotWriteTheDirSaysSo) {
  { ASSERT_TRUE(open()); }
  namespace fs = std::filesystem;
  fs::permissions(fs::path(dir_).parent_path(),
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  for (const auto& entry : fs::directory_iterator(dir_))
    fs::permissions(entry.path(),
                    fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
  std::string error;
  if (geteuid() != 0) {
    auto r = caldera::Store::open(dir_);
    ASSERT_FALSE(r.ok());
    error = r.error();
  } else {
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(out[0]);
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
      auto r = caldera::Store::open(dir_);
      std::string text = r.ok() ? "opened" : r.error();
      if (write(out[1], text.data(), text.size()) != ssize_t(text.size())) _exit(3);
      _exit(0);
    }
    close(out[1]);
    char chunk[512];
    for (ssize_t n; (n = read(out[0], chunk, sizeof chunk)) > 0;) error.append(chunk, size_t(n));
    close(out[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
  EXPECT_EQ(error.rfind("data dir '" + dir_ + "' is read-only (or not writable by this user)", 0),
            0u)
      << error;
  EXPECT_NE(error.find("Permission denied"), std::string::npos) << error;
  EXPECT_EQ(error.find("in use"), std::string::npos) << error;
}

TEST_F(Store, OpenFailsWhenDirCannotBeCreated) {
  std::filesystem::create_directories(std::filesystem::path(dir_).parent_path());
  { std::ofstream(std::filesystem::path(dir_).parent_path() / "file") << "x"; }
  auto r =
      caldera::Store::open((std::filesystem::path(dir_).parent_path() / "file" / "db").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("cannot create data dir"), std::string::npos) << r.error();
}

// The child reports a key only after its done callback, so every reported key must survive kill -9.
[[noreturn]] void crash_child(const std::string& dir, int report_fd) {
  auto r = caldera::Store::open(dir, StoreOptions{.sync = true});
  if (!r.ok()) _exit(2);
  auto& store = *r.value();
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  for (int i = 0; i < 200; ++i) {
    {
      // A few commits in flight, so the kill can land with some queued and some syncing.
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < 4; });
      ++in_flight;
    }
    std::string key = "crash" + std::to_string(1000 + i);
    store.commit({put(Family::Jobs, key, "j"), put(Family::NodePods, key, "p")},
                 [&, key](std::string e) {
                   if (!e.empty()) _exit(3);
                   std::string line = key + "\n";
                   if (write(report_fd, line.data(), line.size()) != ssize_t(line.size())) _exit(4);
                   std::lock_guard lock(mu);
                   --in_flight;
                   cv.notify_one();
                 });
  }
  store.flush();
  _exit(0);  // skip destructors: the point is what is durable without a clean close
}

TEST_F(Store, ReportedCommitsSurviveKillDashNine) {
  std::filesystem::create_directories(dir_);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    crash_child(dir_, fds[1]);
  }
  close(fds[1]);

  std::vector<std::string> reported;
  std::string buf;
  bool killed = false;
  char chunk[256];
  for (;;) {
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;  // EOF: the child exited or was killed
    buf.append(chunk, size_t(n));
    for (size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1)) {
      reported.push_back(buf.substr(0, nl));
    }
    if (!killed && reported.size() >= 50) {
      kill(pid, SIGKILL);
      killed = true;
    }
  }
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(killed) << "child reported only " << reported.size() << " keys, status " << status;
  EXPECT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << status;

  auto s = open();
  ASSERT_TRUE(s);
  for (const auto& key : reported) {
    EXPECT_EQ(s->get(Family::Jobs, key), "j") << key;
    EXPECT_EQ(s->get(Family::NodePods, key), "p") << key;
  }
  // Atomic across families: a commit is either in both or in neither.
  std::set<std::string> jobs, pods;
  s->scan(Family::Jobs, [&](std::string_view k, std::string_view) { jobs.emplace(k); });
  s->scan(Family::NodePods, [&](std::string_view k, std::string_view) { pods.emplace(k); });
  EXPECT_EQ(jobs, pods);
  EXPECT_GE(jobs.size(), reported.size());
}

// A store on its own small tmpfs, which a filler file fills up: the real ENOSPC path of RocksDB.
class StoreOnSmallDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/caldera-store-full-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    mnt_ = tmpl;
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      std::filesystem::remove(mnt_);
      mnt_.clear();
      GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << strerror(errno);
    }
    dir_ = mnt_ + "/db";
  }
  void TearDown() override {
    if (mnt_.empty()) return;
    ::umount2(mnt_.c_str(), MNT_DETACH);
    std::filesystem::remove(mnt_);
  }

  // Writes the filler until the filesystem has no page left.
  void fill_disk() {
    int fd = ::open((mnt_ + "/filler").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    std::string chunk(64 << 10, 'f');
    for (size_t size = chunk.size(); size > 0; size /= 2)
      while (::write(fd, chunk.data(), size) == ssize_t(size)) {
      }
    ::close(fd);
  }
  void free_disk() { std::filesystem::remove(mnt_ + "/filler"); }

  // Commits 4 KiB values until one fails (the first to need a page that is not there).
  static std::string commit_until_error(caldera::Store& s, int* committed) {
    for (int i = 0; i < 1000; ++i) {
      auto e =
          commit_sync(s, {put(Family::Jobs, "full" + std::to_string(i), std::string(4096, 'v'))});
      if (!e.empty()) return e;
      ++*committed;
    }
    return "";
  }

  std::string mnt_;
  std::string dir_;
};

TEST_F(StoreOnSmallDisk, ResumesWritesOnceSpaceIsFreed) {
  auto opened = caldera::Store::open(
      dir_, StoreOptions{.sync = true, .resume_interval = std::chrono::milliseconds(50)});
  ASSERT_TRUE(opened.ok()) << opened.error();
  auto& s = *opened.value();
  EXPECT_EQ(commit_sync(s, {put(Family::Jobs, "before", "1")}), "");
  EXPECT_TRUE(s.writable());

  fill_disk();
  int committed = 0;
  auto error = commit_until_error(s, &committed);
  ASSERT_NE(error.find("No space left"), std::string::npos) << error;
  EXPECT_FALSE(s.writable());
  auto h = s.health();
  EXPECT_FALSE(h.writable);
  EXPECT_NE(h.error.find("No space left"), std::string::npos) << h.error;
  EXPECT_GT(h.unwritable_ms, 0);

  // Meanwhile every commit fails at once, saying why and that it is retried.
  error = commit_sync(s, {put(Family::Jobs, "refused", "x")});
  EXPECT_NE(error.find("not writable"), std::string::npos) << error;
  EXPECT_NE(error.find("No space left"), std::string::npos) << error;
  EXPECT_TRUE(eventually_true([&] { return s.health().resume_attempts >= 2; }));
  EXPECT_FALSE(s.writable());

  free_disk();
  ASSERT_TRUE(eventually_true([&] { return s.writable(); })) << s.health().error;
  EXPECT_EQ(s.health().resume_attempts, 0u);
  EXPECT_EQ(commit_sync(s, {put(Family::Jobs, "after", "2")}), "");
  EXPECT_EQ(s.get(Family::Jobs, "before"), "1");
  EXPECT_EQ(s.get(Family::Jobs, "after"), "2");
  EXPECT_EQ(s.get(Family::Jobs, "refused"), std::nullopt);
  EXPECT_EQ(s.get(Family::Jobs, "full" + std::to_string(committed)), std::nullopt);
  if (committed > 0) {
    EXPECT_TRUE(s.get(Family::Jobs, "full" + std::to_string(committed - 1)));
  }
}

// RocksDB as Debian builds it has assertions on: a second line to its LOG file after a failed
// append aborted the process, typically in DB::Close (SIGTERM of calderad ended in exit 134).
TEST_F(StoreOnSmallDisk, ClosingAfterAWriteErrorDoesNotAbortAndKeepsWhatWasCommitted) {
  std::filesystem::create_directories(dir_);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto r = caldera::Store::open(dir_);
    if (!r.ok()) _exit(2);
    if (!commit_sync(*r.value(), {put(Family::Jobs, "kept", "1")}).empty()) _exit(3);
    fill_disk();
    int committed = 0;
    if (commit_until_error(*r.value(), &committed).empty()) _exit(4);
    // Time for more of RocksDB's logging while it cannot write.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    r.value().reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);

  free_disk();
  auto s = caldera::Store::open(dir_);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s.value()->get(Family::Jobs, "kept"), "1");
  EXPECT_TRUE(s.value()->writable());
}

// A data dir on a filesystem mounted read-only (EROFS): said so, not that its LOCK is held.
TEST_F(StoreOnSmallDisk, OpenOnAReadOnlyMountSaysReadOnlyNotInUse) {
  {
    auto r = caldera::Store::open(dir_);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(commit_sync(*r.value(), {put(Family::Jobs, "kept", "1")}), "");
  }
  ASSERT_EQ(::mount("tmpfs", mnt_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=4m"), 0)
      << strerror(errno);
  auto r = caldera::Store::open(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.error().rfind("data dir '" + dir_ + "' is read-only (or not writable by this user): ", 0),
      0u)
      << r.error();
  EXPECT_NE(r.error().find("Read-only file system"), std::string::npos) << r.error();
  EXPECT_EQ(r.error().find("in use"), std::string::npos) << r.error();
}

TEST_F(Store, IsWritableWhenHealthy) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->writable());
  auto h = s->health();
  EXPECT_TRUE(h.writable);
  EXPECT_EQ(h.error, "");
  EXPECT_EQ(h.unwritable_ms, 0);
}

}  // namespace
}  // namespace caldera::store_test

namespace caldera::store_test {
namespace {

// Within one batch a key keeps only its last write (put or delete): the batch is one atomic
// write, so nothing between could ever be seen. Every commit is still answered, in order.
TEST_F(Store, ABatchKeepsOnlyTheLastWriteOfAKey) {
  auto s = open(StoreOptions{.sync = false});
  ASSERT_TRUE(s);
  ASSERT_EQ(commit_sync(*s, {put(Family::Jobs, "gone", "old"), put(Family::Pods, "k", "pod")}), "");
  // Hold the writer inside a done callback, so that the commits below share the next batch.
  WriterGate gate(*s);
  std::vector<int> answered;
  auto note = [&](int i) {
    return [&answered, i](std::string e) {
      EXPECT_EQ(e, "");
      answered.push_back(i);
    };
  };
  s->commit({put(Family::Jobs, "k", "v1"), put(Family::Jobs, "other", "o")}, note(0));
  s->commit({put(Family::Jobs, "k", "v2")}, note(1));
  s->commit({put(Family::Jobs, "k", "v3"), del(Family::Jobs, "gone")}, note(2));
  s->commit({put(Family::Jobs, "gone", "back"), del(Family::Jobs, "other")}, note(3));
  gate.open();
  s->flush();
  EXPECT_EQ(answered, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s->get(Family::Jobs, "k"), "v3");
  EXPECT_EQ(s->get(Family::Jobs, "gone"), "back");
  EXPECT_EQ(s->get(Family::Jobs, "other"), std::nullopt);
  EXPECT_EQ(s->get(Family::Pods, "k"), "pod");  // the same key in another family is untouched
  // k twice, gone once and other once were superseded within the batch.
  EXPECT_EQ(s->stats().coalesced, 4u);
}

// Meta's counters take additions in the same batch as the rows they count: two in one batch
// both count (no coalescing), a put after them still sets the value, and count_with reads the
// rows and the counter at one instant, so that a counter a failed write left off can be mended.
TEST_F(Store, CountersAddUpWithinABatchAndAcrossReopens) {
  auto s = open(StoreOptions{.sync = false});
  ASSERT_TRUE(s);
  {
    WriterGate gate(*s);
    s->commit({counter_add("n", 1), put(Family::History, "a", "1")}, [](std::string) {});
    s->commit({counter_add("n", 1), put(Family::History, "b", "2")}, [](std::string) {});
    s->commit({counter_add("n", 1), counter_add("n", -1), counter_add("other", 5)},
              [](std::string) {});
    gate.open();
    s->flush();
  }
  ASSERT_TRUE(s->get(Family::Meta, "n"));
  EXPECT_EQ(counter_value(*s->get(Family::Meta, "n")), 2);
  EXPECT_EQ(counter_value(*s->get(Family::Meta, "other")), 5);
  EXPECT_EQ(s->stats().coalesced, 0u);
  auto counted = s->count_with(Family::History, "n");
  ASSERT_TRUE(counted) << counted.error();
  EXPECT_EQ(*counted, (std::pair<int64_t, int64_t>{2, 2}));
  // A row written without its addition shows as the difference.
  ASSERT_EQ(commit_sync(*s, {put(Family::History, "c", "3")}), "");
  EXPECT_EQ(*s->count_with(Family::History, "n"), (std::pair<int64_t, int64_t>{3, 2}));
  EXPECT_EQ(*s->count_with(Family::History, "missing"), (std::pair<int64_t, int64_t>{3, 0}));
  ASSERT_EQ(commit_sync(*s, {counter_add("n", 1)}), "");
  s.reset();
  s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(counter_value(*s->get(Family::Meta, "n")), 3);
  EXPECT_EQ(commit_sync(*s, {counter_add("n", -3), counter_add("n", 10)}), "");
  EXPECT_EQ(counter_value(*s->get(Family::Meta, "n")), 10);
}

}  // namespace
}  // namespace caldera::store_test
