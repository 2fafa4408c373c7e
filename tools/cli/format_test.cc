#include "tools/cli/format.h"

#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/cli/table.h"

namespace sluice {
namespace sluicectl {
namespace {

using ::testing::HasSubstr;

// 2026-11-30T02:00:00.000Z
constexpr int64_t kT0 = 1796004000000;

TEST(TableTest, AlignsColumnsWithoutTrailingSpaces) {
  Table t({"NAME", "ROWS", "NOTE"}, {Table::kLeft, Table::kRight});
  t.AddRow({"a", "5", ""});
  t.AddRow({"longer", "12345", "x"});
  t.AddRow({"short"});
  EXPECT_EQ(t.Render(),
            "NAME     ROWS  NOTE\n"
            "a           5\n"
            "longer  12345  x\n"
            "short\n");
  EXPECT_EQ(Table({"A"}).Render("  "), "  A\n");
}

TEST(FormatPiecesTest, OffsetsTimesDurationsBytes) {
  google::protobuf::Map<int32_t, int64_t> offsets;
  offsets[2] = 30;
  offsets[0] = 10;
  offsets[1] = INT64_MAX;
  EXPECT_EQ(FormatOffsets(offsets), "0:10 1:end 2:30");
  EXPECT_EQ(FormatOffsets({}), "-");
  EXPECT_EQ(FormatTimeMs(kT0), "2026-11-30T02:00:00.000Z");
  EXPECT_EQ(FormatTimeMs(0), "-");
  EXPECT_EQ(FormatDurationMs(2480500), "41m20s");
  EXPECT_EQ(FormatDurationMs(250), "250ms");
  EXPECT_EQ(FormatDurationMs(-5000), "overdue 5s");
  EXPECT_EQ(FormatDurationMs(0), "-");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(3 * 1024 * 1024), "3.0 MiB");
}

TEST(FormatTest, SupervisorList) {
  v1::ListSupervisorsResponse response;
  EXPECT_EQ(FormatSupervisorList(response), "no supervisors\n");
  auto* s = response.add_supervisors();
  s->set_datasource("wiki");
  s->set_state(v1::SUPERVISOR_STATE_RUNNING);
  s->set_healthy(true);
  s->set_spec_version(3);
  s = response.add_supervisors();
  s->set_datasource("clicks");
  s->set_state(v1::SUPERVISOR_STATE_UNHEALTHY_SUPERVISOR);
  s->set_suspended(true);
  s->set_spec_version(12);
  s->set_message("Kafka unreachable");
  EXPECT_EQ(FormatSupervisorList(response),
            "DATASOURCE  STATE                 HEALTHY  SUSPENDED  SPEC  MESSAGE\n"
            "wiki        RUNNING               yes      no           v3\n"
            "clicks      UNHEALTHY_SUPERVISOR  no       yes         v12  Kafka unreachable\n");
}

TEST(FormatTest, StatusShowsSegmentsFailingVerification) {
  v1::SupervisorStatus status;
  status.set_datasource("wiki");
  status.set_state(v1::SUPERVISOR_STATE_RUNNING);
  status.set_segments_published(7);
  const std::string healthy = FormatStatus(status);
  EXPECT_EQ(healthy.find("damaged"), std::string::npos) << healthy;
  status.set_segments_failing_verification(2);
  const std::string damaged = FormatStatus(status);
  EXPECT_NE(damaged.find("published:     7 segment(s)\n"
                         "damaged:       2 used segment(s) fail deep-storage verification "
                         "(sluicectl segments shows which)\n"),
            std::string::npos)
      << damaged;
}

TEST(FormatTest, StatusShowsTheIcebergTableAndItsLastError) {
  v1::SupervisorStatus status;
  status.set_datasource("wiki");
  const std::string native = FormatStatus(status);
  EXPECT_EQ(native.find("iceberg table"), std::string::npos) << native;
  v1::IcebergTableStatus* t = status.mutable_iceberg_table();
  t->set_table_namespace("sluice");
  t->set_table_name("wiki");
  const std::string fresh = FormatStatus(status);
  EXPECT_NE(fresh.find("sluice.wiki at - (no commit yet)"), std::string::npos) << fresh;
  t->set_metadata_location("file:///deep/iceberg/sluice/wiki/metadata/00001-a.metadata.json");
  t->set_last_snapshot_id(77);
  t->set_last_commit_ms(1000);
  t->set_last_commit_error("UNAVAILABLE: moved by another writer");
  t->set_last_commit_error_ms(2000);
  t->set_orphan_files_removed(3);
  const std::string shown = FormatStatus(status);
  EXPECT_NE(shown.find("sluice.wiki at file:///deep/iceberg/sluice/wiki/metadata/00001-a.metadata.json"),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("77 at "), std::string::npos) << shown;
  EXPECT_NE(shown.find("UNAVAILABLE: moved by another writer"), std::string::npos) << shown;
  EXPECT_NE(shown.find("3 file(s)"), std::string::npos) << shown;
}

TEST(FormatTest, StatusShowsCompactionDoneAndPendingWithWhy) {
  v1::SupervisorStatus status;
  status.set_datasource("wiki");
  EXPECT_EQ(FormatStatus(status).find("compaction"), std::string::npos);
  v1::CompactionStatus* c = status.mutable_compaction();
  c->set_enabled(true);
  c->set_compactions(2);
  c->set_segments_replaced(19);
  c->set_rows_compacted(40000);
  c->set_conflicts(1);
  v1::CompactionRecord* r = c->add_recent();
  r->mutable_interval()->set_start_ms(0);
  r->mutable_interval()->set_end_ms(3600000);
  r->set_input_segments(18);
  r->set_output_segments(1);
  r->set_rows(39000);
  r->set_duration_ms(850);
  r->set_committed_at_ms(5000);
  r->set_snapshot_id(42);
  v1::PendingCompaction* p = c->add_pending();
  p->mutable_interval()->set_start_ms(3600000);
  p->mutable_interval()->set_end_ms(7200000);
  p->set_segments(4);
  p->set_rows(900);
  p->set_reason("within skipOffsetFromLatest");
  c->set_last_error("UNAVAILABLE: deep storage");
  c->set_last_error_ms(6000);
  const std::string shown = FormatStatus(status);
  EXPECT_NE(shown.find("automatic; 2 compaction(s) replaced 19 segment(s), 40000 row(s); 1 lost "
                       "a race"),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("1970-01-01T00:00:00.000Z/1970-01-01T01:00:00.000Z: 18 segment(s) into 1, "
                       "39000 row(s) in 850 ms at "),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("snapshot 42"), std::string::npos) << shown;
  EXPECT_NE(shown.find("1970-01-01T01:00:00.000Z/1970-01-01T02:00:00.000Z: 4 segment(s), 900 "
                       "row(s): within skipOffsetFromLatest"),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("UNAVAILABLE: deep storage"), std::string::npos) << shown;
}

TEST(FormatTest, StatusShowsPartitionsGroupsTasksAndErrors) {
  v1::SupervisorStatus status;
  status.set_datasource("wiki");
  status.set_state(v1::SUPERVISOR_STATE_RUNNING);
  status.set_detailed_state("CREATING_TASKS");
  status.set_healthy(true);
  status.set_topic("wiki-edits");
  status.set_partitions(2);
  status.set_spec_version(3);
  status.set_segments_published(7);
  status.set_aggregate_lag(45);
  status.set_offsets_last_updated_ms(kT0);
  (*status.mutable_committed_offsets())[0] = 100;
  (*status.mutable_committed_offsets())[1] = 5;
  (*status.mutable_current_offsets())[0] = 120;
  (*status.mutable_latest_offsets())[0] = 150;
  (*status.mutable_latest_offsets())[1] = 20;
  (*status.mutable_lag())[0] = 30;
  (*status.mutable_lag())[1] = 15;
  (*status.mutable_time_lag_ms())[0] = 2500;
  status.set_max_time_lag_ms(2500);
  v1::TaskGroupStatus* group = status.add_active_groups();
  group->set_group_id(0);
  group->set_base_sequence_name("wiki_1a2b");
  group->add_partitions(1);
  group->add_partitions(0);
  (*group->mutable_start_offsets())[0] = 100;
  (*group->mutable_start_offsets())[1] = 5;
  group->add_checkpoints();
  group->add_checkpoints();
  group->set_remaining_ms(2480500);
  v1::TaskSummary* task = group->add_tasks();
  task->set_task_id("wiki_1a2b_x");
  task->set_worker_id("worker-0");
  task->set_state(v1::TASK_STATE_READING);
  (*task->mutable_current_offsets())[0] = 120;
  (*task->mutable_current_offsets())[1] = 5;
  task->set_start_time_ms(kT0);
  v1::ErrorEvent* error = status.add_recent_errors();
  error->set_time_ms(kT0);
  error->set_message("task wiki_1a2b_y failed: worker lost");

  EXPECT_EQ(FormatStatus(status),
            "datasource:    wiki\n"
            "state:         RUNNING (CREATING_TASKS)\n"
            "healthy:       yes\n"
            "suspended:     no\n"
            "topic:         wiki-edits, 2 partition(s)\n"
            "spec version:  3\n"
            "published:     7 segment(s)\n"
            "lag:           45 record(s) in total, offsets as of 2026-11-30T02:00:00.000Z\n"
            "time lag:      2500 ms at most\n"
            "\n"
            "PARTITION  COMMITTED  CURRENT  LATEST  LAG  TIME LAG MS\n"
            "        0        100      120     150   30         2500\n"
            "        1          5        -      20   15            -\n"
            "\n"
            "active groups: 1\n"
            "  GROUP  BASE SEQUENCE  PARTITIONS  START OFFSETS  CHECKPOINTS  ROLLS IN\n"
            "      0  wiki_1a2b      0,1         0:100 1:5                2  41m20s\n"
            "    TASK         WORKER    STATE    CURRENT OFFSETS  STARTED\n"
            "    wiki_1a2b_x  worker-0  READING  0:120 1:5        2026-11-30T02:00:00.000Z\n"
            "publishing groups: 0\n"
            "\n"
            "recent errors:\n"
            "  2026-11-30T02:00:00.000Z  task wiki_1a2b_y failed: worker lost\n");
}

TEST(FormatTest, StatusBeforeAnyOffsetsAreKnown) {
  v1::SupervisorStatus status;
  status.set_datasource("new");
  status.set_state(v1::SUPERVISOR_STATE_PENDING);
  EXPECT_THAT(FormatStatus(status), HasSubstr("partitions: none known yet\n"));
}

TEST(FormatTest, SegmentsWithTotals) {
  v1::ListSegmentsResponse response;
  EXPECT_EQ(FormatSegments(response), "no segments\n");
  auto* s = response.add_segments();
  s->set_id("wiki_A_B_V_0");
  s->set_num_rows(1000);
  s->set_size_bytes(2048);
  s->set_handoff_state(v1::HANDOFF_STATE_HANDED_OFF);
  s->set_used(true);
  s->set_published_by_task("wiki_1a2b_x");
  s = response.add_segments();
  s->set_id("wiki_A_B_V_1");
  s->set_num_rows(5);
  s->set_size_bytes(100);
  s->set_handoff_state(v1::HANDOFF_STATE_PENDING);
  s->set_used(true);
  EXPECT_EQ(FormatSegments(response),
            "SEGMENT       ROWS     SIZE  HANDOFF     USED  PUBLISHED BY\n"
            "wiki_A_B_V_0  1000  2.0 KiB  handed-off  yes   wiki_1a2b_x\n"
            "wiki_A_B_V_1     5    100 B  pending     yes   -\n"
            "2 segment(s), 1005 row(s), 2.1 KiB\n");
}

TEST(FormatTest, WorkersShowHeartbeatAge) {
  v1::ListWorkersResponse response;
  auto* w = response.add_workers();
  w->set_worker_id("worker-0");
  w->set_address("10.0.0.5:7071");
  w->set_alive(true);
  w->set_running_tasks(2);
  w->set_capacity(4);
  w->set_last_heartbeat_ms(kT0 - 3000);
  w->set_version("0.1");
  w->set_start_time_ms(kT0 - 3600000);
  EXPECT_EQ(FormatWorkers(response, kT0),
            "WORKER    ADDRESS        ALIVE  TASKS  LAST HEARTBEAT  VERSION  STARTED\n"
            "worker-0  10.0.0.5:7071  yes      2/4  3s ago          0.1      "
            "2026-11-30T01:00:00.000Z\n");
}

TEST(FormatTest, TasksAndCommitLog) {
  v1::SupervisorServiceListTasksResponse tasks;
  EXPECT_EQ(FormatTasks(tasks), "no tasks\n");
  auto* t = tasks.add_tasks();
  t->set_task_id("wiki_1a2b_x");
  t->set_datasource("wiki");
  t->set_worker_id("worker-0");
  t->set_state(v1::TASK_STATE_FAILED);
  t->set_error("OffsetOutOfRange");
  t->mutable_row_stats()->set_processed(10);
  t->mutable_row_stats()->set_unparseable(1);
  t->set_updated_at_ms(kT0);
  EXPECT_EQ(FormatTasks(tasks),
            "TASK         DATASOURCE  GROUP  WORKER    STATE   ROWS  UNPARSEABLE  CURRENT OFFSETS  "
            "UPDATED                   ERROR\n"
            "wiki_1a2b_x  wiki            0  worker-0  FAILED    10            1  -                "
            "2026-11-30T02:00:00.000Z  OffsetOutOfRange\n");

  v1::GetCommitLogResponse log;
  log.set_datasource("wiki");
  log.set_topic("wiki-edits");
  (*log.mutable_initial_offsets())[0] = 0;
  (*log.mutable_committed_offsets())[0] = 100;
  auto* seq = log.add_sequences();
  seq->set_sequence_name("wiki_1a2b_0");
  seq->set_task_id("wiki_1a2b_x");
  seq->set_committed_at_ms(kT0);
  (*seq->mutable_start_offsets())[0] = 0;
  (*seq->mutable_end_offsets())[0] = 100;
  auto* stats = seq->add_partition_stats();
  stats->set_rows(97);
  stats->set_unparseable(2);
  stats->set_thrown_away(1);
  seq->add_segment_ids("s1");
  EXPECT_EQ(FormatCommitLog(log),
            "datasource:    wiki\n"
            "topic:         wiki-edits\n"
            "initial:       0:0\n"
            "committed:     0:100\n"
            "sequences:     1\n"
            "\n"
            "SEQUENCE     TASK         COMMITTED                 RANGES     ROWS  UNPARSEABLE  "
            "THROWN AWAY  SEGMENTS\n"
            "wiki_1a2b_0  wiki_1a2b_x  2026-11-30T02:00:00.000Z  0:[0,100)    97            2  "
            "          1         1\n");
}

TEST(FormatTest, AutoscalerInStatusAndScalingsInTheCommitLog) {
  v1::SupervisorStatus status;
  status.set_datasource("wiki");
  v1::AutoScalerStatus* a = status.mutable_auto_scaler();
  a->set_task_count(3);
  a->set_pending_task_count(2);
  a->set_samples(10);
  a->set_samples_above_scale_out(0);
  a->set_samples_below_scale_in(10);
  a->set_last_lag(12);
  v1::ScalingDecision* d = a->mutable_last_decision();
  d->set_decision_id(1);
  d->set_from_task_count(1);
  d->set_to_task_count(3);
  d->set_reason("scale out: 4 of 10 lag samples");
  d->set_decided_at_ms(kT0);
  d->set_applied_at_ms(kT0);
  const std::string text = FormatStatus(status);
  EXPECT_THAT(text, HasSubstr("autoscaler:    3 task group(s), 2 at the next roll-over; 10 lag "
                              "sample(s), 0 >= scale-out, 10 <= scale-in, last 12\n"));
  EXPECT_THAT(text, HasSubstr("last scaling:  1 -> 3 at 2026-11-30T02:00:00.000Z: scale out: 4 "
                              "of 10 lag samples\n"));

  v1::GetCommitLogResponse log;
  log.set_datasource("wiki");
  *log.add_scaling_decisions() = *d;
  EXPECT_EQ(FormatCommitLog(log),
            "datasource:    wiki\n"
            "topic:         -\n"
            "initial:       -\n"
            "committed:     -\n"
            "sequences:     0\n"
            "scalings:      1\n"
            "\n"
            "SCALING  FROM  TO  DECIDED                   APPLIED                   REASON\n"
            "      1     1   3  2026-11-30T02:00:00.000Z  2026-11-30T02:00:00.000Z  scale out: 4 "
            "of 10 lag samples\n");
}

TEST(FormatTest, TopicPatternStatusNamesEachStreamPartitionAndTheCommitLogListsThem) {
  v1::SupervisorStatus status;
  status.set_datasource("metrics");
  status.set_topic_pattern("metrics-.*");
  status.set_partitions(3);
  auto name = [](auto* list, int32_t id, const std::string& topic, int32_t partition) {
    v1::StreamPartition* p = list->Add();
    p->set_id(id);
    p->set_topic(topic);
    p->set_partition(partition);
  };
  name(status.mutable_stream_partitions(), 0, "metrics-a", 0);
  name(status.mutable_stream_partitions(), 1, "metrics-a", 1);
  name(status.mutable_stream_partitions(), 2, "metrics-b", 0);
  (*status.mutable_latest_offsets())[0] = 10;
  (*status.mutable_latest_offsets())[2] = 7;
  const std::string text = FormatStatus(status);
  EXPECT_THAT(text, HasSubstr("topic:         pattern metrics-.*, 3 partition(s) of 2 topic(s) "
                              "seen\n"));
  EXPECT_THAT(text, HasSubstr("PARTITION  TOPIC[PARTITION]  COMMITTED"));
  EXPECT_THAT(text, HasSubstr("        2  metrics-b[0]"));

  v1::GetCommitLogResponse log;
  log.set_datasource("metrics");
  log.set_topic_pattern("metrics-.*");
  name(log.mutable_stream_partitions(), 0, "metrics-a", 0);
  name(log.mutable_stream_partitions(), 1, "metrics-b", 0);
  EXPECT_EQ(FormatCommitLog(log),
            "datasource:    metrics\n"
            "topic:         pattern metrics-.*\n"
            "initial:       -\n"
            "committed:     -\n"
            "sequences:     0\n"
            "\n"
            "PARTITION  TOPIC      KAFKA PARTITION\n"
            "        0  metrics-a                0\n"
            "        1  metrics-b                0\n");
}

TEST(FormatTest, SubmitSummaryHistoryAndJson) {
  v1::SubmitSupervisorResponse submit;
  submit.mutable_spec()->set_datasource("wiki");
  submit.set_version(2);
  submit.set_replaced(true);
  EXPECT_EQ(FormatSubmit(submit),
            "wiki: stored spec version 2 (replaced the running spec; its tasks finish and "
            "publish first)\n");
  submit.set_unchanged(true);
  EXPECT_THAT(FormatSubmit(submit), HasSubstr("unchanged"));
  v1::GetSupervisorResponse got;
  *got.mutable_spec() = submit.spec();
  got.set_version(submit.version());
  EXPECT_EQ(FormatSpec(got), "# wiki, spec version 2\n{\n \"datasource\": \"wiki\"\n}\n");

  v1::SupervisorSummary summary;
  summary.set_datasource("wiki");
  summary.set_state(v1::SUPERVISOR_STATE_SUSPENDED);
  summary.set_suspended(true);
  summary.set_healthy(true);
  summary.set_spec_version(2);
  summary.set_message("tasks are publishing");
  EXPECT_EQ(FormatSummary(summary),
            "wiki: SUSPENDED, healthy, suspended, spec version 2: tasks are publishing\n");

  v1::GetSupervisorHistoryResponse history;
  EXPECT_EQ(FormatHistory("wiki", history), "wiki: no spec history\n");
  auto* v = history.add_versions();
  v->set_version(2);
  v->set_created_at_ms(kT0);
  v->mutable_spec()->mutable_io_config()->set_topic("wiki-edits");
  v->mutable_spec()->mutable_io_config()->set_task_count(2);
  v->mutable_spec()->mutable_io_config()->set_replicas(1);
  v->mutable_spec()->mutable_io_config()->set_task_duration("PT1H");
  EXPECT_EQ(FormatHistory("wiki", history),
            "VERSION  CREATED                   TERMINATED  TOPIC       TASKS  REPLICAS  DURATION\n"
            "      2  2026-11-30T02:00:00.000Z  no          wiki-edits      2         1  PT1H\n");

  v1::MarkSegmentsLoadedResponse marked;
  marked.set_marked(2);
  EXPECT_EQ(FormatMarkLoaded("wiki", 3, marked), "wiki: marked 2 of 3 segment(s) loaded\n");
  EXPECT_EQ(ToJson(marked), "{\n \"marked\": 2\n}\n");

  // int64 offsets and counts are numbers, not proto3's strings.
  v1::GetCommitLogResponse log;
  (*log.mutable_committed_offsets())[0] = 1200;
  log.add_sequences()->set_committed_at_ms(5000000);
  EXPECT_EQ(ToJson(log),
            "{\n \"committedOffsets\": {\n  \"0\": 1200\n },\n \"sequences\": [\n  {\n   "
            "\"committedAtMs\": 5000000\n  }\n ]\n}\n");
}

}  // namespace
}  // namespace sluicectl
}  // namespace sluice
