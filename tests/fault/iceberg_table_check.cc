#include "tests/fault/iceberg_table_check.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "tests/testing/subprocess.h"
#include "tools/audit/live_audit.h"
#include "tests/testing/iceberg_readers.h"

namespace sluice::fault {
namespace {

constexpr char kTable[] = "wiki";  // sluice.<datasource>
constexpr char kFilePrefix[] = "file://";

absl::StatusOr<std::string> TableDir(FaultScenario& s) {
  const std::string uri = s.deep_storage_uri();
  if (!absl::StartsWith(uri, kFilePrefix)) {
    return absl::UnimplementedError(absl::StrCat("the table check reads file:// deep storage, not ",
                                                 uri));
  }
  return absl::StrCat(uri.substr(sizeof(kFilePrefix) - 1), "/iceberg/sluice/", kTable);
}

std::string Quoted(const std::string& text) { return absl::StrCat("\"", text, "\""); }

}  // namespace

absl::Status CopyNewestMetadata(FaultScenario& s, std::vector<StagedMetadata>* out) {
  SLUICE_ASSIGN_OR_RETURN(const std::string table, TableDir(s));
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(table + "/metadata"));
  int newest = -1;
  std::vector<std::string> documents;
  for (const std::string& name : names) {
    int version = -1;
    // NNNNN-<uuid>.metadata.json
    if (!absl::EndsWith(name, ".metadata.json") || name.size() < 6 ||
        !absl::SimpleAtoi(name.substr(0, 5), &version)) {
      continue;
    }
    if (version > newest) documents.clear();
    if (version >= newest) {
      newest = version;
      documents.push_back(name);
    }
  }
  if (documents.empty()) {
    return absl::NotFoundError(absl::StrCat("no metadata document in ", table, "/metadata"));
  }
  const std::string dir = s.root_dir() + "/staged-metadata";
  SLUICE_RETURN_IF_ERROR(MakeDirs(dir));
  for (const std::string& name : documents) {
    SLUICE_ASSIGN_OR_RETURN(std::string content, ReadFile(table + "/metadata/" + name));
    StagedMetadata staged;
    staged.location = absl::StrCat(kFilePrefix, table, "/metadata/", name);
    staged.copy = absl::StrCat(dir, "/", name);
    SLUICE_RETURN_IF_ERROR(WriteFileAtomically(staged.copy, content));
    out->push_back(std::move(staged));
  }
  return absl::OkStatus();
}

absl::Status CheckIcebergTable(FaultScenario& s, const IcebergTableCheck& check) {
  SLUICE_ASSIGN_OR_RETURN(const std::string table_dir, TableDir(s));
  SLUICE_ASSIGN_OR_RETURN(const v1::SupervisorStatus status, s.Status());
  if (status.iceberg_table().metadata_location().empty()) {
    return absl::FailedPreconditionError("the supervisor reports no Iceberg table");
  }
  SLUICE_ASSIGN_OR_RETURN(
      const audit::AuditInputs inputs,
      audit::FetchAuditInputs(*s.supervisor(), kDatasource, absl::Seconds(10)));
  int64_t rows = 0;
  for (const v1::SegmentDescriptor& segment : inputs.used_segments) rows += segment.num_rows();
  std::vector<std::string> sequences;
  for (const v1::CommittedSequence& sequence : inputs.commit_log.sequences()) {
    std::vector<std::string> ranges;
    for (const auto& [p, start] : sequence.start_offsets()) {
      ranges.push_back(absl::StrCat(Quoted(absl::StrCat("sluice.kafka.", s.options().topic, ".", p)),
                                    ": ",
                                    Quoted(absl::StrCat(start, "-", sequence.end_offsets().at(p)))));
    }
    std::sort(ranges.begin(), ranges.end());
    sequences.push_back(absl::StrCat("{\"sequence\": ", Quoted(sequence.sequence_name()),
                                     ", \"ranges\": {", absl::StrJoin(ranges, ", "), "}}"));
  }
  std::vector<std::string> ends;
  for (const auto& [p, end] : inputs.commit_log.committed_offsets()) {
    ends.push_back(absl::StrCat(Quoted(absl::StrCat(p)), ": ", end));
  }
  std::vector<std::string> staged;
  for (const StagedMetadata& m : check.staged_at_fault) {
    staged.push_back(absl::StrCat("{\"location\": ", Quoted(m.location), ", \"copy\": ",
                                  Quoted(m.copy), "}"));
  }
  const Produced produced = s.produced();
  const std::string schema =
      "[[\"__time\", \"timestamptz\"], [\"channel\", \"string\"], [\"page\", \"string\"], "
      "[\"user\", \"string\"], [\"namespace\", \"string\"], [\"countryName\", \"string\"], "
      "[\"isRobot\", \"string\"], [\"count\", \"long\"], [\"added\", \"long\"], "
      "[\"deleted\", \"long\"], [\"delta\", \"double\"]]";
  const std::string expected = absl::StrCat(
      "{\"warehouse\": ", Quoted(s.deep_storage_uri()),
      ", \"catalog_properties\": {}, \"local_prefixes\": {\"file://\": \"\"}",
      ", \"metadata_location\": ", Quoted(status.iceberg_table().metadata_location()),
      ", \"datasource\": ", Quoted(kDatasource), ", \"table\": ", Quoted(kTable),
      ", \"topic\": ", Quoted(s.options().topic), ", \"schema\": ", schema,
      ", \"records\": ", produced.records - produced.malformed, ", \"rows\": ", rows,
      ", \"end_offsets\": {", absl::StrJoin(ends, ", "), "}, \"sequences\": [",
      absl::StrJoin(sequences, ", "), "], \"orphan_metadata\": [", absl::StrJoin(staged, ", "),
      "], \"min_restaged_sequences\": ", check.min_restaged_sequences,
      ", \"orphan_files_removed\": ", status.iceberg_table().orphan_files_removed(),
      ", \"min_replace_snapshots\": ", check.min_replace_snapshots, "}\n");
  const std::string expected_path = s.root_dir() + "/iceberg-expected.json";
  SLUICE_RETURN_IF_ERROR(WriteFileAtomically(expected_path, expected));
  // The catalog in the supervisor's store: its SQLite file, or the
  // PostgreSQL URL in SQLAlchemy's form (psycopg2).
  const std::string& url = s.options().metadata_store_url;
  const std::string store =
      url.empty() ? s.cluster().data_dir(cluster::kSupervisor) + "/metadata.db"
      : absl::StartsWith(url, "postgresql://")
          ? absl::StrCat("postgresql+psycopg2://", url.substr(strlen("postgresql://")))
          : url;
  testing::SubprocessOptions run;
  run.binary = sluice::testing::IcebergReadersPython();
  run.args = {"tests/iceberg/check_cluster_table.py", store, expected_path};
  run.name = "check_cluster_table";
  const testing::CapturedRun result = testing::RunToCompletion(run, absl::Minutes(3));
  std::printf("[iceberg table] %s %s %s\n%s%s", run.binary.c_str(), store.c_str(),
              expected_path.c_str(), result.out.c_str(), result.err.c_str());
  std::fflush(stdout);
  if (!result.ok()) {
    return absl::InternalError(absl::StrCat("the Iceberg table of scenario ", s.options().name,
                                            " disagrees with the native side: ",
                                            result.Describe(), "\n", s.Context()));
  }
  return absl::OkStatus();
}

}  // namespace sluice::fault
