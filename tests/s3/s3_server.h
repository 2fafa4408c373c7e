// One real S3-compatible server per test binary: s3s-fs (third_party/s3s-fs,
// built by scripts/install_s3_server.sh), started by a gtest Environment on a
// free loopback port over $TEST_TMPDIR/s3s-fs, with an access key and secret
// made at random per run, so every request must carry a valid SigV4
// signature. Link //tests/s3:s3_server (alwayslink) and use
//
//   S3Server* server = SharedS3Server();   // never null inside a test
//   ASSERT_OK(server->CreateBucket("b"));
//   s3::S3Options options = server->Options();
//
// A missing binary fails every test of the binary (it never skips).
#ifndef SLUICE_TESTS_S3_S3_SERVER_H_
#define SLUICE_TESTS_S3_S3_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/s3/s3_options.h"
#include "tests/testing/subprocess.h"

namespace sluice::s3::testing {

class S3Server {
 public:
  // Starts s3s-fs over `data_dir` (created).
  static absl::StatusOr<std::unique_ptr<S3Server>> Start(const std::string& data_dir);

  int port() const { return port_; }
  // http://127.0.0.1:<port>
  std::string endpoint() const;
  const std::string& data_dir() const { return data_dir_; }
  const S3Credentials& credentials() const { return credentials_; }
  // The file s3s-fs keeps an object's bytes in.
  std::string ObjectPath(const std::string& bucket, const std::string& key) const;

  // A bucket is a directory of the data dir to s3s-fs.
  absl::Status CreateBucket(const std::string& bucket) const;

  // Path-style options for this server (or `endpoint` instead, e.g. a proxy
  // in front of it), with short backoffs for tests.
  S3Options Options(const std::string& endpoint = "") const;

  bool Running() { return process_->Running(); }
  absl::Status Stop();

 private:
  S3Server() = default;

  std::unique_ptr<sluice::testing::Subprocess> process_;
  int port_ = 0;
  std::string data_dir_;
  S3Credentials credentials_;
};

// The path of the pinned s3s-fs: $SLUICE_S3S_FS, else
// ~/.cache/sluice/s3s-fs/<third_party/s3s-fs/VERSION>/bin/s3s-fs.
absl::StatusOr<std::string> FindS3sFs();

// The shared server (fails the calling test and returns null if it did not
// start).
S3Server* SharedS3Server();

// A bucket name unique to the running test ("t-<suite>-<name>", lowercased).
std::string UniqueBucket();

}  // namespace sluice::s3::testing

#endif  // SLUICE_TESTS_S3_S3_SERVER_H_
