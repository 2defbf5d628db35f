// Store on RocksDB: opening every column family, group commit by one writer thread, direct reads,
// and resuming after write errors (a full disk) without a restart.
#include <fcntl.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <utility>

#include "common/clock.hpp"
#include "storage/store.hpp"

namespace caldera {
namespace {

constexpr std::array<std::pair<Family, const char*>, 12> kFamilyNames{{
    {Family::Jobs, "jobs"},
    {Family::NodePods, "node_pods"},
    {Family::Meta, "meta"},
    {Family::Templates, "templates"},
    {Family::Flows, "flows"},
    {Family::Pods, "pods"},
    {Family::Specs, "specs"},
    {Family::Scheduling, "scheduling"},
    {Family::Summaries, "summaries"},
    {Family::Live, "live"},
    {Family::NodeRetired, "node_retired"},
    {Family::History, "history"},
}};

const char* family_name(Family family) {
  for (const auto& [f, name] : kFamilyNames)
    if (f == family) return name;
  return "?";
}

size_t family_index(Family family) {
  return static_cast<size_t>(family);
}

std::string counter_bytes(int64_t v) {
  std::string out(sizeof v, '\0');
  for (size_t i = 0; i < sizeof v; ++i)
    out[i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  return out;
}

// Meta's counters: a merge adds its operand (a little-endian int64) to the value.
class CounterMerge : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger*) const override {
    int64_t sum = counter_value(std::string_view(value.data(), value.size()));
    if (existing) sum += counter_value(std::string_view(existing->data(), existing->size()));
    *new_value = counter_bytes(sum);
    return true;
  }
  const char* Name() const override { return "caldera.CounterMerge"; }
};

// RocksDB's own LOG file lives on the data disk, and Debian builds RocksDB with assertions on:
// once an append to it fails (disk full), the next line logged to it aborts the process in
// WritableFileWriter (`sync_without_flush_called_`), typically the warning DB::Close logs. So
// RocksDB logs through spdlog (calderad's stderr) instead, where a failed write costs a line.
class SpdLogger final : public rocksdb::Logger {
 public:
  SpdLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char line[1024];
    int n = std::vsnprintf(line, sizeof line, format, ap);
    if (n < 0) return;
    // Its warnings repeat for every resume attempt while the disk is full; the store says once.
    if (level >= rocksdb::InfoLogLevel::ERROR_LEVEL && level != rocksdb::InfoLogLevel::HEADER_LEVEL)
      spdlog::error("rocksdb: {}", line);
    else
      spdlog::debug("rocksdb: {}", line);
  }
};

// Shared by the store and the RocksDB listener, which may call in before the store exists and
// from RocksDB's threads.
class HealthState {
 public:
  // Returns true when this error is the one that stopped writes (the caller logs it).
  bool fail(const std::string& error) {
    std::lock_guard lock(mu_);
    if (!health_.writable) return false;
    health_ = StoreHealth{false, error, system_now_ms(), 0};
    return true;
  }
  void resume_failed() {
    std::lock_guard lock(mu_);
    ++health_.resume_attempts;
  }
  // Returns what the health was, for the recovery log line.
  StoreHealth recovered() {
    std::lock_guard lock(mu_);
    StoreHealth was = health_;
    health_ = StoreHealth{};
    return was;
  }
  StoreHealth get() const {
    std::lock_guard lock(mu_);
    return health_;
  }
  bool writable() const {
    std::lock_guard lock(mu_);
    return health_.writable;
  }

 private:
  mutable std::mutex mu_;
  StoreHealth health_;
};

// Sees RocksDB enter its background-error state (a failed WAL append, flush or compaction), which
// stops all writes, and keeps RocksDB from recovering on its own: its SstFileManager waits for
// write_buffer_size (64 MiB) of free space before it even tries, forever on a small disk, and
// meanwhile DB::Resume() answers Busy. The store's writer resumes instead.
class ErrorListener final : public rocksdb::EventListener {
 public:
  explicit ErrorListener(std::shared_ptr<HealthState> health) : health_(std::move(health)) {}

  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) override {
    using Severity = rocksdb::Status::Severity;
    // Soft errors (most failed compactions) leave writes going.
    if (error->ok() || error->severity() == Severity::kSoftError) return;
    if (reason == rocksdb::BackgroundErrorReason::kCompaction &&
        error->severity() < Severity::kHardError)
      return;
    if (health_->fail(error->ToString()))
      spdlog::error("store: writes stopped by a background error: {}", error->ToString());
  }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/, rocksdb::Status /*error*/,
                            bool* auto_recovery) override {
    *auto_recovery = false;
  }

 private:
  std::shared_ptr<HealthState> health_;
};

constexpr size_t kMemtableBytes = size_t{32} << 20;
constexpr size_t kBlockCacheBytes = size_t{16} << 20;

rocksdb::DBOptions db_options(const std::shared_ptr<HealthState>& health) {
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.info_log = std::make_shared<SpdLogger>();
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.listeners.push_back(std::make_shared<ErrorListener>(health));
  // Nor its own retries of other IO errors: while they run, DB::Resume() answers Busy.
  o.max_bgerror_resume_count = 0;
  // The vector memtable takes one writer at a time (the store has one writer thread anyway).
  o.allow_concurrent_memtable_write = false;
  // Memory stays flat however long the cluster runs: the memtables of every family together
  // hold at most this much (each family alone would take 64 MiB, twice over, and a job writes
  // nine of them). Past it RocksDB 7.8 flushes the family whose memtable is the oldest, not the
  // largest, so the small families are flushed in turn too (into small files to compact).
  o.db_write_buffer_size = kMemtableBytes;
  return o;
}

// Why RocksDB could not open a data dir, as far as open_error tells the cases apart.
enum class OpenProblem { LockHeld, NotWritable, Other };

// A pure function of RocksDB's status text (`io_error`: the status is an IO error) and of
// `write_errno`, what a write-access check of the dir or its LOCK file failed with (0: passed or
// not made). RocksDB's text says which call failed and, by strerror, why. A held LOCK fails the
// lock call itself, "While lock file" (EAGAIN, or EACCES on some systems: the errno alone does not
// tell), or, when this process holds it, "lock hold by current process". A dir it may not write
// fails earlier, opening or creating LOCK ("while open a file for lock"), or later, creating the
// WAL or the MANIFEST, with EACCES, EPERM (an immutable dir) or EROFS.
OpenProblem classify_open_error(std::string_view text, bool io_error, int write_errno) {
  if (!io_error) return OpenProblem::Other;
  auto has = [text](std::string_view part) {
    auto lower = [](char ch) {
      return static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    };
    return std::search(text.begin(), text.end(), part.begin(), part.end(),
                       [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
  };
  if (has("while lock file") || has("lock hold by current process")) return OpenProblem::LockHeld;
  for (int e : {EACCES, EPERM, EROFS})
    if (has(std::strerror(e))) return OpenProblem::NotWritable;
  if (write_errno == EACCES || write_errno == EPERM || write_errno == EROFS)
    return OpenProblem::NotWritable;
  return OpenProblem::Other;
}

// What a write-access check of `dir`, then of its LOCK file if there is one, fails with; 0 if
// both pass. With the effective ids, as the open itself used.
int write_access_errno(const std::string& dir) {
  for (const std::string& path : {dir, dir + "/LOCK"}) {
    if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0 && errno != ENOENT) return errno;
  }
  return 0;
}

std::string open_error(const std::string& dir, const rocksdb::Status& s) {
  std::string text = s.ToString();
  switch (classify_open_error(text, s.IsIOError(), s.IsIOError() ? write_access_errno(dir) : 0)) {
    case OpenProblem::LockHeld:
      return "data dir '" + dir +
             "' is in use by another process (or already open in this one), its LOCK is held: " +
             text;
    case OpenProblem::NotWritable:
      return "data dir '" + dir + "' is read-only (or not writable by this user): " + text;
    case OpenProblem::Other:
      break;
  }
  return "cannot open store in '" + dir + "': " + text;
}

struct Pending {
  std::vector<Write> writes;
  std::function<void(std::string)> done;
};

class RocksDbStore final : public Store {
 public:
  RocksDbStore(rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
               std::array<rocksdb::ColumnFamilyHandle*, kFamilyNames.size()> families,
               StoreOptions options, std::shared_ptr<HealthState> health)
      : db_(db),
        handles_(std::move(handles)),
        families_(families),
        options_(options),
        health_(std::move(health)) {
    // The idle writer wakes up every interval: zero would make it spin.
    options_.resume_interval = std::max(options_.resume_interval, std::chrono::milliseconds(10));
    writer_ = std::thread([this] { run_writer(); });
  }

  ~RocksDbStore() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_one();
    writer_.join();
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    // Closing after a write error is fine: what was synced is in the WAL, replayed on open.
    auto s = db_->Close();
    if (!s.ok()) spdlog::warn("store: close: {}", s.ToString());
    delete db_;
  }

  void commit(std::vector<Write> writes, std::function<void(std::string error)> done) override {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(Pending{std::move(writes), std::move(done)});
      ++submitted_;
    }
    work_cv_.notify_one();
  }

  std::optional<std::string> get(Family family, std::string_view key) override {
    std::string value;
    auto s = db_->Get(rocksdb::ReadOptions(), handle(family),
                      rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::nullopt;
    if (!s.ok()) {
      damaged("reading " + std::string(key) + " of " + family_name(family) +
              " failed: " + s.ToString());
      return std::nullopt;
    }
    return value;
  }

  std::string scan_from(
      Family family, std::string_view from,
      const std::function<bool(std::string_view key, std::string_view value)>& fn) override {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handle(family)));
    size_t count = 0;
    for (it->Seek(rocksdb::Slice(from.data(), from.size())); it->Valid(); it->Next(), ++count) {
      auto k = it->key();
      auto v = it->value();
      if (!fn(std::string_view(k.data(), k.size()), std::string_view(v.data(), v.size()))) break;
    }
    // An iterator stops at an I/O error or a corrupt block as it stops at the end: only its
    // status tells them apart.
    if (it->status().ok()) return "";
    auto error = "reading " + std::string(family_name(family)) + " stopped after " +
                 std::to_string(count) + " records: " + it->status().ToString();
    damaged(error);
    return error;
  }

  Result<std::pair<int64_t, int64_t>> count_with(Family family, std::string_view counter) override {
    const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot;
    std::string value;
    auto s =
        db_->Get(ro, handle(Family::Meta), rocksdb::Slice(counter.data(), counter.size()), &value);
    int64_t rows = 0;
    std::string error;
    if (s.ok() || s.IsNotFound()) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handle(family)));
      for (it->SeekToFirst(); it->Valid(); it->Next()) ++rows;
      if (!it->status().ok())
        error = "counting " + std::string(family_name(family)) + " stopped after " +
                std::to_string(rows) + " records: " + it->status().ToString();
    } else {
      error = "reading counter " + std::string(counter) + " failed: " + s.ToString();
    }
    db_->ReleaseSnapshot(snapshot);
    if (!error.empty()) {
      damaged(error);
      return Failure{error};
    }
    return std::pair<int64_t, int64_t>{rows, s.ok() ? counter_value(value) : 0};
  }

  void flush() override {
    // A done callback runs on the writer thread; waiting there for itself would never return.
    if (std::this_thread::get_id() == writer_.get_id()) return;
    std::unique_lock lock(mu_);
    const uint64_t target = submitted_;
    done_cv_.wait(lock, [&] { return completed_ >= target; });
  }

  StoreStats stats() const override {
    return StoreStats{commits_.load(), batches_.load(), writes_.load(), coalesced_.load()};
  }

  bool writable() const override { return health_->writable(); }
  StoreHealth health() const override { return health_->get(); }

  std::string checkpoint(const std::string& dir) override {
    rocksdb::Checkpoint* raw = nullptr;
    auto s = rocksdb::Checkpoint::Create(db_, &raw);
    if (!s.ok()) return "cannot make a checkpoint: " + s.ToString();
    std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
    s = checkpoint->CreateCheckpoint(dir);
    if (!s.ok()) return "cannot write a checkpoint to '" + dir + "': " + s.ToString();
    return "";
  }

 private:
  using SteadyClock = std::chrono::steady_clock;

  rocksdb::ColumnFamilyHandle* handle(Family family) const {
    return families_[family_index(family)];
  }

  void damaged(const std::string& error) {
    spdlog::critical("store: {}", error);
    if (options_.on_damaged) options_.on_damaged(error);
  }

  // Takes whole commits from the front of the queue until the next one would exceed
  // max_batch_writes; the first is always taken, so an oversized commit is never split.
  std::vector<Pending> take_batch() {
    std::vector<Pending> batch;
    size_t writes = 0;
    while (!queue_.empty()) {
      size_t next = queue_.front().writes.size();
      if (!batch.empty() && writes + next > options_.max_batch_writes) break;
      writes += next;
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    return batch;
  }

  void run_writer() {
    std::unique_lock lock(mu_);
    auto next_resume = SteadyClock::time_point::min();
    for (;;) {
      auto ready = [&] { return stopping_ || !queue_.empty(); };
      if (health_->writable()) {
        // A background error arriving meanwhile shows up at the next write; a second's wait
        // bounds how late health() starts retrying without one.
        work_cv_.wait_for(lock, options_.resume_interval, ready);
      } else {
        work_cv_.wait_until(lock, next_resume, ready);
      }
      if (!health_->writable() && SteadyClock::now() >= next_resume) {
        lock.unlock();
        try_resume();
        lock.lock();
        next_resume = SteadyClock::now() + options_.resume_interval;
      }
      if (queue_.empty()) {
        if (stopping_) return;  // drained
        continue;
      }
      std::vector<Pending> batch = take_batch();
      // Unlocked while writing and syncing, so that new commits pile up into the next batch.
      lock.unlock();
      bool was_writable = health_->writable();
      const auto started = SteadyClock::now();
      write_batch(batch);
      if (options_.on_batch && health_->writable()) {  // refused batches are not commits
        size_t writes = 0;
        for (const auto& p : batch) writes += p.writes.size();
        options_.on_batch(SteadyClock::now() - started, writes);
      }
      lock.lock();
      // The first retry waits a full interval: right after the error the disk is still full.
      if (was_writable && !health_->writable())
        next_resume = SteadyClock::now() + options_.resume_interval;
      completed_ += batch.size();
      done_cv_.notify_all();
    }
  }

  void try_resume() {
    auto s = db_->Resume();
    if (!s.ok()) {
      health_->resume_failed();
      // Once per distinct reason: the retries go on every interval, and an operator who freed
      // space and still sees writes refused needs to know what RocksDB says now. Its text names a
      // new file each time, so the kind of error is what counts as distinct.
      const auto kind = std::make_pair(int(s.code()), int(s.subcode()));
      if (kind != last_resume_error_) {
        spdlog::warn("store: resume failed, retried every {} ms: {}",
                     options_.resume_interval.count(), s.ToString());
        last_resume_error_ = kind;
      }
      return;
    }
    last_resume_error_ = {};
    auto was = health_->recovered();
    spdlog::info("store: writable again after {} ms and {} failed resume attempts",
                 system_now_ms() - was.unwritable_ms, was.resume_attempts);
  }

  void write_batch(std::vector<Pending>& batch) {
    std::string error;
    if (auto h = health_->get(); !h.writable) {
      // RocksDB would refuse it too; say why, and that it is temporary.
      error = "the data dir is not writable (writes stopped after an error, resumed every " +
              std::to_string(options_.resume_interval.count()) + " ms): " + h.error;
    }
    // A key written again later in the batch keeps only its last write: the batch is applied
    // (and recovered) as a whole, so no reader, nor a crash, can see the ones in between. Under
    // load a short job's rows are written several times within one batch.
    std::vector<const Write*> all;
    for (const auto& p : batch)
      for (const auto& w : p.writes) all.push_back(&w);
    std::vector<bool> superseded(all.size(), false);
    if (all.size() > 1) {
      std::unordered_set<std::string_view> seen[kFamilyNames.size()];
      // An addition to a counter builds on what is before it: it neither hides nor is hidden
      // (a put after it still hides the writes before that put).
      for (size_t i = all.size(); i-- > 0;)
        if (!all[i]->counter)
          superseded[i] = !seen[static_cast<size_t>(all[i]->family)].insert(all[i]->key).second;
    }
    rocksdb::WriteBatch wb;
    size_t count = 0;
    for (size_t i = 0; i < all.size() && error.empty(); ++i) {
      if (superseded[i]) {
        coalesced_.fetch_add(1);
        continue;
      }
      const Write& w = *all[i];
      auto s = w.counter ? wb.Merge(handle(w.family), w.key, counter_bytes(w.add))
               : w.value ? wb.Put(handle(w.family), w.key, *w.value)
                         : wb.Delete(handle(w.family), w.key);
      if (!s.ok()) error = s.ToString();
      ++count;
    }
    if (error.empty() && count > 0) {
      rocksdb::WriteOptions wo;
      wo.sync = options_.sync;
      auto s = db_->Write(wo, &wb);
      if (s.ok()) {
        batches_.fetch_add(1);
        writes_.fetch_add(count);
      } else {
        error = s.ToString();
        // The listener has normally seen it already; an IO error stops RocksDB's writes anyway.
        if (s.IsIOError() && health_->fail(error))
          spdlog::error("store: a write failed, writes stopped: {}", error);
      }
    }
    commits_.fetch_add(batch.size());
    if (options_.deliver) {
      std::vector<std::function<void()>> completions;
      completions.reserve(batch.size());
      for (auto& p : batch)
        if (p.done) completions.push_back([done = std::move(p.done), error] { done(error); });
      if (!completions.empty()) options_.deliver(std::move(completions));
      return;
    }
    for (auto& p : batch) {
      if (p.done) p.done(error);
    }
  }

  rocksdb::DB* db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // every open family, for destruction
  std::array<rocksdb::ColumnFamilyHandle*, kFamilyNames.size()> families_;
  StoreOptions options_;
  std::shared_ptr<HealthState> health_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Pending> queue_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  std::pair<int, int> last_resume_error_;  // code and subcode; the writer thread's own

  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> coalesced_{0};

  std::thread writer_;  // last: started after every other member is ready
};

}  // namespace

Write counter_add(std::string_view key, int64_t delta) {
  return Write{Family::Meta, std::string(key), std::nullopt, true, delta};
}

int64_t counter_value(std::string_view bytes) {
  if (bytes.size() != sizeof(int64_t)) return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof v; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return static_cast<int64_t>(v);
}

Result<std::unique_ptr<Store>> Store::open(const std::string& dir, StoreOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Failure{"cannot create data dir '" + dir + "': " + ec.message()};

  auto health = std::make_shared<HealthState>();
  rocksdb::DBOptions dbo = db_options(health);
  // Families a newer binary added must be opened too, or RocksDB refuses the whole database.
  std::vector<std::string> names{rocksdb::kDefaultColumnFamilyName};
  for (const auto& [family, name] : kFamilyNames) names.emplace_back(name);
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(dbo, dir, &existing).ok()) {
    for (const auto& name : existing) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  // The families written on every change of a job or pod take a vector memtable: it appends in
  // O(1) and sorts once when it is flushed, where the default skiplist pays a pointer-chasing
  // sorted insert per write on the writer thread, the store's serial stage. A read of one sorts
  // a copy of it (at most the shared memtable budget): reads of finished jobs are rare next to
  // writes, and a read for a name that is not there (every submit asks) stops at the
  // memtable's bloom filter. The others keep the skiplist. Every family's tables have bloom
  // filters, and share one block cache (each would otherwise make its own).
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  rocksdb::ColumnFamilyOptions sorted;
  sorted.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::ColumnFamilyOptions appended = sorted;
  appended.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  appended.memtable_prefix_bloom_size_ratio = 0.02;
  appended.memtable_whole_key_filtering = true;
  for (const auto& name : names) {
    bool hot = false;
    for (auto f : {Family::Jobs, Family::Pods, Family::Summaries, Family::NodePods, Family::Live})
      hot = hot || name == family_name(f);
    auto options = hot ? appended : sorted;
    if (name == family_name(Family::Meta)) {
      options.merge_operator = std::make_shared<CounterMerge>();
      // Every settled job adds to one counter: past this many additions in a row the write
      // folds them into a value, so that a read of the counter does not walk them all (RocksDB
      // 7.8, Debian's; from 9.1 on that also takes strict_max_successive_merges).
      options.max_successive_merges = 64;
    }
    descriptors.emplace_back(name, options);
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  auto s = rocksdb::DB::Open(dbo, dir, descriptors, &handles, &db);
  if (!s.ok()) return Failure{open_error(dir, s)};

  // names[0] is "default"; the known families follow in kFamilyNames order.
  std::array<rocksdb::ColumnFamilyHandle*, kFamilyNames.size()> families{};
  for (size_t i = 0; i < kFamilyNames.size(); ++i) {
    families[family_index(kFamilyNames[i].first)] = handles[i + 1];
  }
  return std::unique_ptr<Store>(
      new RocksDbStore(db, std::move(handles), families, options, std::move(health)));
}

}  // namespace caldera
