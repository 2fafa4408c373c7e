// sluice-task: a task worker. Runs the reading tasks the supervisor assigns,
// restores them after a restart. Its own flags are read here; those both
// binaries share (deep storage, S3, TLS, authentication, Kafka policy,
// shutdown grace) in common/service_flags.cc.
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/file_util.h"
#include "common/grpc_server.h"
#include "common/kafka/consumer_settings.h"
#include "common/metrics/registry.h"
#include "common/service_flags.h"
#include "task/worker_server.h"

DEFINE_string(listen, "0.0.0.0:7071", "host:port to serve gRPC on (port 0: pick a free one)");
DEFINE_string(data_dir, "./sluice-data/worker", "directory of task state (sequences, spills)");
DEFINE_string(supervisor, "127.0.0.1:7070",
              "host:port of the supervisor, or a comma-separated list of supervisors that elect "
              "a leader (calls follow the leader)");
DEFINE_string(worker_id, "", "stable worker id, e.g. the pod name (default: host name)");
DEFINE_string(advertise_address, "", "host:port the supervisor dials (default: the bound address)");
DEFINE_int32(capacity, 4, "task slots");
DEFINE_int32(concurrent_segment_builds, 0,
             "segment builds (merge, write, verify) at once across the tasks (Druid's "
             "druid.worker.numConcurrentMerges); 0: half the cores, at least 1");
DEFINE_int64(ingestion_memory_bytes, 0,
             "memory for ingestion across all tasks, divided evenly over the --capacity slots: "
             "a task's maxBytesInMemory is at most its share (Druid's Indexer "
             "globalIngestionHeapLimitBytes); 0: each task's spec decides");
DEFINE_string(metrics_listen, "",
              "host:port to serve Prometheus /metrics and /healthz on, plain HTTP (empty: off); "
              "with authentication on, all but /healthz need a reader or admin bearer token");
DEFINE_int32(supervisor_timeout_ms, 10000, "deadline of calls to the supervisor");
DEFINE_int32(heartbeat_interval_ms, 1000,
             "heartbeat interval until the supervisor sets one, and registration retry interval");
DEFINE_int32(handoff_poll_ms, 1000, "interval between handoff status checks after a publish");
DEFINE_int32(offset_out_of_range_retry_ms, 5000,
             "wait before reading again a partition whose offset is out of range");
DEFINE_int32(max_batch_records, 10000, "records taken from Kafka per batch");
DEFINE_double(early_checkpoint_fraction, 0.9,
              "a sequence at this fraction of maxRowsPerSegment/maxTotalRows asks for its "
              "checkpoint and reads on (pauseless checkpoints); 0: ask when full and park");
DEFINE_int32(claim_chunk_records, 64,
             "records the read loop claims at a time (how far ahead of the routed records "
             "end offsets set while reading are checked)");
DEFINE_string(kafka_cluster, "kafka",
              "kind of Kafka cluster, for the consumer defaults: kafka, or dev (sluice-devbroker)");
DEFINE_string(fault_points, "",
              "test only: fault points, e.g. task.after_push=crash (see common/fault_injection.h)");
DEFINE_string(port_file, "", "if set, the bound host:port is written there once serving");

namespace {

// glibc's malloc gives each thread that contends an arena of its own (up to
// 8 per core) and keeps what is freed in it, and raises its mmap threshold
// after every large free, so the transient buffers of segment builds and
// persists on many task threads stay resident. Two arenas always (1 task:
// VmHWM 194 -> 185 MiB; 4 tasks on one worker 305 -> 236 MiB; throughput
// within the noise). With a worker memory budget (--ingestion_memory_bytes)
// also a fixed 1 MiB mmap threshold, so large buffers go back to the system
// when freed: 4 tasks on one worker 236 -> 219 MiB, 1 task 185 -> 155 MiB,
// for ~7% of the throughput (docs/benchmarks.md "Worker memory").
// GLIBC_TUNABLES naming malloc settings wins over both.
void TuneMalloc(bool memory_budget) {
  const char* tunables = getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && strstr(tunables, "glibc.malloc.") != nullptr) return;
  mallopt(M_ARENA_MAX, 2);
  if (memory_budget) mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  sluice::InitServiceProcess("sluice task worker", &argc, &argv);
  TuneMalloc(FLAGS_ingestion_memory_bytes > 0);
  // Outlives the gRPC server and the metrics endpoint (both point into it).
  sluice::metrics::Registry registry;
  sluice::ServiceBasics basics;
  if (int exit_code = sluice::StartServiceFromFlags("[worker]", FLAGS_fault_points,
                                                    FLAGS_metrics_listen, &registry,
                                                    /*routes=*/nullptr, &basics);
      exit_code != 0) {
    return exit_code;
  }

  sluice::task::WorkerServerOptions options;
  options.listen_address = FLAGS_listen;
  options.data_dir = FLAGS_data_dir;
  options.supervisor_address = FLAGS_supervisor;
  options.deep_storage_uri = sluice::DeepStorageUriFromFlags();
  options.deep_storage_options = sluice::DeepStorageOptionsFromFlags();
  options.worker_id = FLAGS_worker_id;
  options.advertise_address = FLAGS_advertise_address;
  options.capacity = FLAGS_capacity;
  if (FLAGS_ingestion_memory_bytes < 0) {
    LOG(ERROR) << "--ingestion_memory_bytes must be >= 0 (got " << FLAGS_ingestion_memory_bytes
               << ")";
    return 2;
  }
  options.ingestion_memory_bytes = FLAGS_ingestion_memory_bytes;
  options.concurrent_segment_builds =
      FLAGS_concurrent_segment_builds > 0
          ? FLAGS_concurrent_segment_builds
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
  options.supervisor_call_timeout = absl::Milliseconds(FLAGS_supervisor_timeout_ms);
  options.heartbeat_interval = absl::Milliseconds(FLAGS_heartbeat_interval_ms);
  options.tuning.handoff_poll_interval = absl::Milliseconds(FLAGS_handoff_poll_ms);
  options.tuning.offset_out_of_range_retry = absl::Milliseconds(FLAGS_offset_out_of_range_retry_ms);
  options.tuning.max_batch_records = static_cast<size_t>(std::max(1, FLAGS_max_batch_records));
  options.tuning.early_checkpoint_fraction = FLAGS_early_checkpoint_fraction;
  options.tuning.claim_chunk_records =
      static_cast<size_t>(std::max(1, FLAGS_claim_chunk_records));
  if (auto kind = sluice::kafka::ParseClusterKind(FLAGS_kafka_cluster); kind.ok()) {
    options.tuning.kafka_cluster = *kind;
  } else {
    LOG(ERROR) << "[worker] --kafka_cluster: " << kind.status();
    return 2;
  }
  options.tls = sluice::TlsOptionsFromFlags();
  options.auth = basics.security.auth;
  options.client_auth = basics.security.client_auth;
  options.tuning.kafka_policy = basics.security.kafka_policy;
  options.metrics = &registry;
  auto server = sluice::task::WorkerServer::Start(std::move(options));
  if (!server.ok()) {
    LOG(ERROR) << "[worker] cannot start: " << server.status();
    return 1;
  }
  if (!FLAGS_port_file.empty()) {
    if (absl::Status s = sluice::WriteFileAtomically(FLAGS_port_file, (*server)->address());
        !s.ok()) {
      LOG(ERROR) << "[worker] --port_file: " << s;
      return 1;
    }
  }
  sluice::ServeUntilShutdownSignal("[worker]",
                                   [&](absl::Duration grace) { (*server)->Shutdown(grace); });
  return 0;
}
