// S3 deep storage when the server misbehaves: a fault proxy between the
// client and a real s3s-fs answers 500/503, answers slowly, or drops the
// connection mid-push. Within the retry budget the push succeeds (and the
// object is whole); beyond it the push fails UNAVAILABLE (retry later).
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/s3/s3_deep_storage.h"
#include "tests/s3/fault_proxy.h"
#include "tests/s3/s3_server.h"
#include "tests/testing/subprocess.h"

namespace sluice::s3 {
namespace {

using testing::Fault;
using testing::FaultKind;
using testing::FaultProxy;
using testing::SharedS3Server;

class S3FaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = SharedS3Server();
    ASSERT_NE(server_, nullptr);
    bucket_ = testing::UniqueBucket();
    ASSERT_TRUE(server_->CreateBucket(bucket_).ok());
    absl::StatusOr<std::unique_ptr<FaultProxy>> proxy = FaultProxy::Start(server_->port());
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = *std::move(proxy);
    absl::StatusOr<std::string> dir = sluice::testing::MakeTempDir("s3faults");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    options_ = server_->Options(proxy_->endpoint());
    options_.retry.max_attempts = 4;
  }

  std::unique_ptr<S3DeepStorage> Open() {
    auto storage = S3DeepStorage::Open(absl::StrCat("s3://", bucket_, "/deep"), options_);
    EXPECT_TRUE(storage.ok()) << storage.status();
    return storage.ok() ? *std::move(storage) : nullptr;
  }

  std::string LocalFile(const std::string& contents) {
    const std::string path = absl::StrCat(dir_, "/f", counter_++);
    EXPECT_TRUE(WriteFileAtomically(path, contents).ok());
    return path;
  }

  // The object as the server holds it.
  std::string Stored(const std::string& key) {
    return ReadFile(server_->ObjectPath(bucket_, "deep/" + key)).value_or("<missing>");
  }

  testing::S3Server* server_ = nullptr;
  std::string bucket_;
  std::unique_ptr<FaultProxy> proxy_;
  std::string dir_;
  S3Options options_;
  int counter_ = 0;
};

TEST_F(S3FaultsTest, SlowDown503IsRetried) {
  auto storage = Open();
  proxy_->Queue(Fault{FaultKind::kStatus, 503}, 2);
  const int before = proxy_->connections();
  absl::StatusOr<std::string> uri = storage->Push(LocalFile("hello"), "wiki/a");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(Stored("wiki/a"), "hello");
  // HEAD (503, 503, 404) then PUT: two extra requests.
  EXPECT_EQ(proxy_->connections() - before, 4);
}

TEST_F(S3FaultsTest, InternalError500IsRetriedWithinTheBudget) {
  auto storage = Open();
  // The HEAD gets through; the PUT meets three 500s, the fourth try lands.
  proxy_->Queue(Fault{FaultKind::kPass}, 1);
  proxy_->Queue(Fault{FaultKind::kStatus, 500}, 3);
  absl::StatusOr<std::string> uri = storage->Push(LocalFile("five hundred"), "wiki/b");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(Stored("wiki/b"), "five hundred");
}

TEST_F(S3FaultsTest, ErrorsBeyondTheBudgetAreUnavailable) {
  auto storage = Open();
  proxy_->SetPersistentFault(Fault{FaultKind::kStatus, 503});
  const int before = proxy_->connections();
  absl::StatusOr<std::string> uri = storage->Push(LocalFile("never"), "wiki/c");
  EXPECT_EQ(uri.status().code(), absl::StatusCode::kUnavailable) << uri.status();
  EXPECT_NE(uri.status().message().find("gave up after 4 attempts"), std::string::npos)
      << uri.status();
  EXPECT_EQ(proxy_->connections() - before, 4) << "bounded: max_attempts requests, no more";
  proxy_->ClearFaults();
  // Once the server answers again the same push goes through.
  uri = storage->Push(LocalFile("never"), "wiki/c");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(Stored("wiki/c"), "never");
}

TEST_F(S3FaultsTest, SlowAnswersTimeOutAndAreRetried) {
  options_.request_timeout = absl::Milliseconds(500);
  auto storage = Open();
  proxy_->Queue(Fault{FaultKind::kDelay, 0, absl::Seconds(2)}, 2);
  absl::StatusOr<std::string> uri = storage->Push(LocalFile("slow"), "wiki/d");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(Stored("wiki/d"), "slow");

  // Always slow: UNAVAILABLE after the budget, not a hang.
  proxy_->SetPersistentFault(Fault{FaultKind::kDelay, 0, absl::Seconds(2)});
  const absl::Time start = absl::Now();
  absl::StatusOr<DeepStorageFileInfo> info = storage->Stat(*uri);
  EXPECT_EQ(info.status().code(), absl::StatusCode::kUnavailable) << info.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
}

TEST_F(S3FaultsTest, ServerGoneMidPushIsRetried) {
  auto storage = Open();
  const std::string contents(300000, 'x');
  // The HEAD passes; the PUT is cut off twice after 100 kB of its body.
  proxy_->Queue(Fault{FaultKind::kPass}, 1);
  proxy_->Queue(Fault{FaultKind::kDrop, 0, absl::ZeroDuration(), 100000}, 2);
  absl::StatusOr<std::string> uri = storage->Push(LocalFile(contents), "wiki/e");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_TRUE(Stored("wiki/e") == contents);
}

TEST_F(S3FaultsTest, ServerDownDuringAMultipartPush) {
  options_.part_size_bytes = 5 << 20;
  options_.multipart_threshold_bytes = 5 << 20;
  auto storage = Open();
  std::string contents(11 << 20, '\0');
  for (size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>(i * 7 + (i >> 12));
  // HEAD and CreateMultipartUpload pass; part 1 is cut off mid-body, then
  // the server is unreachable twice (connections closed at once).
  proxy_->Queue(Fault{FaultKind::kPass}, 2);
  proxy_->Queue(Fault{FaultKind::kDrop, 0, absl::ZeroDuration(), 1 << 20});
  proxy_->Queue(Fault{FaultKind::kRefuse}, 2);
  absl::StatusOr<std::string> uri = storage->Push(LocalFile(contents), "wiki/big");
  ASSERT_TRUE(uri.ok()) << uri.status();
  absl::StatusOr<std::string> local = storage->LocalPathForRead(*uri, dir_ + "/scratch");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_TRUE(ReadFile(*local).value_or("") == contents);
}

TEST_F(S3FaultsTest, ServerDownForTheWholePushIsUnavailableAndLeavesNothing) {
  options_.part_size_bytes = 5 << 20;
  options_.multipart_threshold_bytes = 5 << 20;
  auto storage = Open();
  const std::string contents(6 << 20, 'y');
  // HEAD and CreateMultipartUpload pass, then the server is gone for good.
  proxy_->Queue(Fault{FaultKind::kPass}, 2);
  proxy_->SetPersistentFault(Fault{FaultKind::kRefuse});
  absl::StatusOr<std::string> uri = storage->Push(LocalFile(contents), "wiki/gone");
  EXPECT_EQ(uri.status().code(), absl::StatusCode::kUnavailable) << uri.status();
  proxy_->ClearFaults();
  EXPECT_TRUE(absl::IsNotFound(storage->Stat(storage->UriForKey("wiki/gone")).status()));
  // A later push of the same key succeeds: the failed one left no object.
  ASSERT_TRUE(storage->Push(LocalFile(contents), "wiki/gone").ok());
}

}  // namespace
}  // namespace sluice::s3
