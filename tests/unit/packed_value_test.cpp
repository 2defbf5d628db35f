#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>

#include <capnp/message.h>

#include "messages/api.capnp.h"
#include "messages/flat.hpp"
#include "storage/packed_value.hpp"
#include "storage/store.hpp"

namespace caldera {
namespace {

// A temporary directory, removed afterwards.
struct TempDir {
  TempDir() {
    std::string tmpl = "/tmp/caldera-test-XXXXXX";
    if (::mkdtemp(tmpl.data())) root = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(root); }
  std::string path() const { return root + "/db"; }
  std::string root;
};

std::string sample_message() {
  capnp::MallocMessageBuilder b;
  auto ref = b.initRoot<api::ObjectRef>();
  ref.setNamespace("default");
  ref.setName("a-job-with-a-name");
  return to_bytes(b);
}

TEST(PackedValue, AMessageRoundTripsSmaller) {
  const std::string message = sample_message();
  const std::string stored = pack_value(message);
  EXPECT_LT(stored.size(), message.size());
  EXPECT_EQ(unpack_value(stored), message);
}

TEST(PackedValue, ValuesThatAreNotWholeWordsAreStoredAsTheyAre) {
  EXPECT_EQ(pack_value("job"), "job");
  EXPECT_EQ(unpack_value("job"), "job");
  EXPECT_EQ(pack_value(""), "");
  EXPECT_EQ(unpack_value(""), "");
}

TEST(PackedValue, AValueThatLooksLikeAMarkerRoundTrips) {
  for (std::string value : {std::string("\xff\xffPK\x05", 5), std::string("\xff\xffRWx", 5),
                            std::string("\xff\xffPK\0\0\0\0", 8)}) {
    EXPECT_EQ(unpack_value(pack_value(value)), value);
  }
}

TEST(PackedValue, AValueStoredBeforePackingReadsAsItIs) {
  const std::string message = sample_message();
  EXPECT_EQ(unpack_value(message), message);
}

TEST(PackedValue, ADamagedValueComesBackAsStored) {
  const std::string stored = pack_value(sample_message());
  const std::string cut = stored.substr(0, stored.size() - 4);
  EXPECT_EQ(unpack_value(cut), cut);
  std::string huge = stored;
  huge[4] = huge[5] = huge[6] = '\x7f';  // an unpacked size far beyond what the bytes hold
  EXPECT_EQ(unpack_value(huge), huge);
}

// The store keeps rows packed on disk and reads rows that an older calderad wrote unpacked.
TEST(PackedValue, TheStorePacksRowsAndReadsUnpackedOnes) {
  TempDir dir;
  const std::string message = sample_message();
  {
    auto store = Store::open(dir.path());
    ASSERT_TRUE(store.ok()) << store.error();
    std::promise<std::string> done;
    store.value()->commit({Write{Family::Jobs, "default/new", message}},
                          [&](std::string e) { done.set_value(std::move(e)); });
    ASSERT_EQ(done.get_future().get(), "");
  }
  {
    rocksdb::DBOptions o;
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(o, dir.path(), &names).ok());
    for (const auto& n : names) families.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), families, &handles, &db).ok());
    auto jobs = std::find(names.begin(), names.end(), "jobs") - names.begin();
    std::string raw;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), handles[jobs], "default/new", &raw).ok());
    EXPECT_EQ(raw, pack_value(message));
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), handles[jobs], "default/old", message).ok());
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
  auto store = Store::open(dir.path());
  ASSERT_TRUE(store.ok()) << store.error();
  EXPECT_EQ(store.value()->get(Family::Jobs, "default/new"), message);
  EXPECT_EQ(store.value()->get(Family::Jobs, "default/old"), message);
  std::vector<std::string> scanned;
  store.value()->scan(Family::Jobs,
                      [&](std::string_view, std::string_view v) { scanned.emplace_back(v); });
  EXPECT_EQ(scanned, (std::vector<std::string>{message, message}));
}

}  // namespace
}  // namespace caldera
