// sluice-segment: inspect segment and spill files.
//
//   sluice-segment dump FILE [--limit=N]   rows as JSON lines
//   sluice-segment stats FILE              summary: metadata, columns, provenance
//   sluice-segment verify FILE...          checksum + full structure; exit 1 on damage
//
// Exit codes: 0 fine, 1 a file is damaged or unreadable, 2 usage error.
#include <gflags/gflags.h>

#include <iostream>
#include <string>

#include "common/segment/segment_reader.h"
#include "tools/segment/inspect.h"

DEFINE_uint64(limit, 0, "dump: print at most this many rows (0: all)");

namespace {

constexpr char kUsage[] =
    "usage: sluice-segment dump FILE [--limit=N]\n"
    "       sluice-segment stats FILE\n"
    "       sluice-segment verify FILE...";

int Fail(const absl::Status& status) {
  std::cerr << "sluice-segment: " << status.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(kUsage);
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/true);
  if (argc < 3) {
    std::cerr << kUsage << "\n";
    return 2;
  }
  const std::string command = argv[1];
  if (command == "verify") {
    int rc = 0;
    for (int i = 2; i < argc; ++i) {
      if (absl::Status s = sluice::tools::VerifyFile(argv[i], std::cout); !s.ok()) rc = Fail(s);
    }
    return rc;
  }
  if (argc != 3 || (command != "dump" && command != "stats")) {
    std::cerr << kUsage << "\n";
    return 2;
  }
  const std::string path = argv[2];
  auto reader = sluice::segment::SegmentReader::Open(path);
  if (!reader.ok()) return Fail(reader.status());
  if (command == "stats") {
    sluice::tools::PrintStats(path, reader->get(), std::cout);
    return 0;
  }
  sluice::tools::DumpOptions options;
  options.limit = FLAGS_limit;
  if (absl::Status s = sluice::tools::DumpJsonLines(reader->get(), options, std::cout); !s.ok()) {
    return Fail(s);
  }
  std::cout.flush();
  return std::cout.good() ? 0 : 1;
}
