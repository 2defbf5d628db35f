// Store on RocksDB: opening every column family, group commit by one writer thread, direct reads.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "storage/store.hpp"

namespace caldera {
namespace {

constexpr std::array<std::pair<Family, const char*>, 6> kFamilyNames{{
    {Family::Jobs, "jobs"},
    {Family::NodePods, "node_pods"},
    {Family::Meta, "meta"},
    {Family::Templates, "templates"},
    {Family::Flows, "flows"},
    {Family::Pods, "pods"},
}};

size_t family_index(Family family) {
  return static_cast<size_t>(family);
}

rocksdb::DBOptions db_options() {
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.keep_log_file_num = 3;
  o.max_log_file_size = 1 << 20;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  return o;
}

// RocksDB reports a held LOCK as an IO error naming the LOCK file, both for another process
// ("While lock file") and for a second open in this process ("lock hold by current process").
std::string open_error(const std::string& dir, const rocksdb::Status& s) {
  std::string text = s.ToString();
  if (s.IsIOError() && text.find("/LOCK") != std::string::npos) {
    return "data dir '" + dir +
           "' is in use by another process (or already open in this one), its LOCK is held: " +
           text;
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
               StoreOptions options)
      : db_(db), handles_(std::move(handles)), families_(families), options_(options) {
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
    if (!s.ok()) return std::nullopt;
    return value;
  }

  void scan(Family family,
            const std::function<void(std::string_view key, std::string_view value)>& fn) override {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handle(family)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      auto k = it->key();
      auto v = it->value();
      fn(std::string_view(k.data(), k.size()), std::string_view(v.data(), v.size()));
    }
  }

  void flush() override {
    // A done callback runs on the writer thread; waiting there for itself would never return.
    if (std::this_thread::get_id() == writer_.get_id()) return;
    std::unique_lock lock(mu_);
    const uint64_t target = submitted_;
    done_cv_.wait(lock, [&] { return completed_ >= target; });
  }

  StoreStats stats() const override {
    return StoreStats{commits_.load(), batches_.load(), writes_.load()};
  }

 private:
  rocksdb::ColumnFamilyHandle* handle(Family family) const {
    return families_[family_index(family)];
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
    for (;;) {
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      std::vector<Pending> batch = take_batch();
      // Unlocked while writing and syncing, so that new commits pile up into the next batch.
      lock.unlock();
      write_batch(batch);
      lock.lock();
      completed_ += batch.size();
      done_cv_.notify_all();
    }
  }

  void write_batch(std::vector<Pending>& batch) {
    rocksdb::WriteBatch wb;
    std::string error;
    size_t count = 0;
    for (const auto& p : batch) {
      for (const auto& w : p.writes) {
        auto s = w.value ? wb.Put(handle(w.family), w.key, *w.value)
                         : wb.Delete(handle(w.family), w.key);
        if (!s.ok() && error.empty()) error = s.ToString();
        ++count;
      }
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
      }
    }
    commits_.fetch_add(batch.size());
    for (auto& p : batch) {
      if (p.done) p.done(error);
    }
  }

  rocksdb::DB* db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // every open family, for destruction
  std::array<rocksdb::ColumnFamilyHandle*, kFamilyNames.size()> families_;
  StoreOptions options_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Pending> queue_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;

  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> writes_{0};

  std::thread writer_;  // last: started after every other member is ready
};

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::string& dir, StoreOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Failure{"cannot create data dir '" + dir + "': " + ec.message()};

  rocksdb::DBOptions dbo = db_options();
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
  for (const auto& name : names) {
    descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
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
  return std::unique_ptr<Store>(new RocksDbStore(db, std::move(handles), families, options));
}

}  // namespace caldera
