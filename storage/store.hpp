// RocksDB store with one column family per kind of record and group commit of synced writes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/model/result.hpp"

namespace caldera {

// Scheduling: Queues ("queue/<name>") and PriorityClasses ("priorityclass/<name>").
// Summaries: one small row per job (what a table of jobs shows), for lists.
// Live: the jobs a restart recreates (not yet finished for good); the value is the job's uid.
// NodeRetired: a node's ended pods whose end their job holds, out of NodePods (which a node's
// restart reads whole) and out of its memory; kept, with their logs, until their job goes.
// History: the settled jobs, oldest first, for retention: key history_key(finished ms, job key),
// value the job's uid. Meta's counter kFinishedJobsCounter says how many rows it holds.
enum class Family {
  Jobs,
  NodePods,
  Meta,
  Templates,
  Flows,
  Pods,
  Specs,
  Scheduling,
  Summaries,
  Live,
  NodeRetired,
  History
};

// Meta's counter of History rows: every write that adds or removes one adds to it in the same
// batch, so it is exact however many jobs there are (a count by scan would read them all).
inline constexpr std::string_view kFinishedJobsCounter = "finished_jobs";

struct StoreOptions {
  bool sync = true;                // fsync every group commit (tests and benchmarks may turn off)
  size_t max_batch_writes = 4096;  // writes folded into one WriteBatch at most
  // After a write error (a full disk), how often the writer asks RocksDB to resume.
  std::chrono::milliseconds resume_interval{1000};
  // Called on the writer thread after each group commit with its time and number of writes
  // (metrics); unset: nothing.
  std::function<void(std::chrono::nanoseconds, size_t writes)> on_batch = {};
  // Runs a group commit's completions (each `done` already given its outcome), in order; unset:
  // the writer thread calls them. calderad hands them to one actor in one message, so that a
  // batch wakes the actor system once instead of once per commit.
  std::function<void(std::vector<std::function<void()>>)> deliver = {};
  // Called (on the reading thread) when a read finds the store damaged: an I/O error or
  // corruption, which would otherwise pass for records that are not there. calderad stops rather
  // than serve part of its state (node/main.cpp); unset: the read just says so.
  std::function<void(const std::string& error)> on_damaged = {};
};

// One change: a put when value is set, a delete otherwise; or, made by counter_add, an addition
// of `add` to a counter of Meta (value unset).
struct Write {
  Family family;
  std::string key;
  std::optional<std::string> value;
  bool counter = false;
  int64_t add = 0;
};

// Adds `delta` to Meta's counter `key` (nothing there: 0).
Write counter_add(std::string_view key, int64_t delta);
// A counter's value as get(Family::Meta, key) returns it; 0 when it is not one.
int64_t counter_value(std::string_view bytes);

// Whether commits can succeed now. After a write error RocksDB refuses every write until it is
// resumed; the store retries that every resume_interval and meanwhile fails commits at once.
struct StoreHealth {
  bool writable = true;
  std::string error;             // while not writable: the error that stopped writes
  int64_t unwritable_ms = 0;     // while not writable: since when (ms since the epoch)
  uint64_t resume_attempts = 0;  // while not writable: failed resumes so far
};

struct StoreStats {
  uint64_t commits = 0;    // commit() calls completed
  uint64_t batches = 0;    // synced WriteBatches written (commits / batches = grouping factor)
  uint64_t writes = 0;     // writes applied
  uint64_t coalesced = 0;  // writes skipped: a later write of the same key was in their batch
};

class Store {
 public:
  // Opens (creating if missing) the database in `dir` with every column family.
  static Result<std::unique_ptr<Store>> open(const std::string& dir, StoreOptions options = {});
  virtual ~Store() = default;

  // Queues writes from any thread. A writer thread folds everything queued into one WriteBatch,
  // writes it (synced), then calls each `done` in submission order with an empty string, or
  // with the error text if the write failed: on the writer thread, or wherever
  // StoreOptions::deliver runs them. `done` must be quick (e.g. a send).
  // A failed write is not durable, but after a crash it may still show up: a failed fsync or a
  // torn write leaves its outcome unknown, so callers must not act as if it surely did not happen.
  virtual void commit(std::vector<Write> writes, std::function<void(std::string error)> done) = 0;

  // Reads what is committed (not what is still queued): at startup, and at run time for
  // finished jobs (a read of a family written on every change sorts a copy of its memtable,
  // whose size the store bounds). Nothing when the key is not there; a read that fails
  // otherwise (StoreOptions::on_damaged) is never taken for that.
  virtual std::optional<std::string> get(Family family, std::string_view key) = 0;
  // Calls fn for every record of the family in key order (the recovery scan). Empty when it saw
  // them all, else why it stopped early (StoreOptions::on_damaged is told too).
  std::string scan(Family family,
                   const std::function<void(std::string_view key, std::string_view value)>& fn) {
    return scan_from(family, {}, [&](std::string_view k, std::string_view v) {
      fn(k, v);
      return true;
    });
  }
  // Calls fn for the records from the first key not below `from`, in key order, until fn
  // returns false or the family ends (a page of a list). Empty, or why it stopped early.
  virtual std::string scan_from(
      Family family, std::string_view from,
      const std::function<bool(std::string_view key, std::string_view value)>& fn) = 0;
  // How many records the family holds and what Meta's counter `counter` says, read at one
  // instant (a snapshot): their difference is what the counter's additions missed (a write that
  // failed and yet landed). Reads every key: call it off the actors' threads. Why not, on a
  // damaged store.
  virtual Result<std::pair<int64_t, int64_t>> count_with(Family family,
                                                         std::string_view counter) = 0;
  // Blocks until everything queued so far is committed (its completions may still be on their
  // way when StoreOptions::deliver is set).
  virtual void flush() = 0;
  virtual StoreStats stats() const = 0;

  // A consistent copy of everything committed so far into `dir`, which must not exist yet (its
  // parent must): a RocksDB checkpoint, hard links where the file system allows, that a store
  // opened on `dir` reads as this one was. Blocks for the copy: call it off the actors' threads.
  // Empty on success, else why not.
  virtual std::string checkpoint(const std::string& dir) = 0;

  // For refusing new work up front with a clear error while commits would fail. Thread-safe.
  virtual bool writable() const = 0;
  virtual StoreHealth health() const = 0;
};

}  // namespace caldera
