#include "bench/e2e/consume_baselines.h"

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kafka/config.h"
#include "common/kafka/consumer_settings.h"
#include "common/kafka/handles.h"
#include "common/status_macros.h"

namespace sluice {
namespace bench {
namespace {

absl::Duration ToDuration(const timeval& tv) {
  return absl::Seconds(tv.tv_sec) + absl::Microseconds(tv.tv_usec);
}

// CPU of this process (the harness runs nothing else while a baseline reads).
absl::Duration SelfCpu() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return ToDuration(usage.ru_utime) + ToDuration(usage.ru_stime);
}

}  // namespace

double ConsumeResult::RecordsPerSecond() const {
  const double seconds = absl::ToDoubleSeconds(elapsed);
  return seconds > 0 ? static_cast<double>(records) / seconds : 0;
}

namespace {

// Runs `args` (args[0]: the binary) with stdout to /dev/null; the result
// counts `expected_records` when it exits 0, with its elapsed time and its
// process's CPU.
absl::StatusOr<ConsumeResult> RunToDevNull(std::vector<std::string> args,
                                           int64_t expected_records) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const absl::Time start = absl::Now();
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    // stdout to /dev/null, as in `kcat ... > /dev/null`; stderr stays ours.
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDOUT_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid) {
    return absl::InternalError(absl::StrCat("wait4: ", strerror(errno)));
  }
  ConsumeResult result;
  result.elapsed = absl::Now() - start;
  result.cpu = ToDuration(usage.ru_utime) + ToDuration(usage.ru_stime);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("`", absl::StrJoin(args, " "), "` failed (status ", status, ")"));
  }
  result.records = expected_records;
  return result;
}

}  // namespace

absl::StatusOr<ConsumeResult> RunKcat(const std::string& kcat_path, const std::string& bootstrap,
                                      const std::string& topic,
                                      const std::vector<std::string>& extra_args,
                                      int64_t expected_records) {
  std::vector<std::string> args = {kcat_path, "-C", "-b", bootstrap,   "-t",
                                   topic,     "-e", "-o", "beginning", "-q"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return RunToDevNull(std::move(args), expected_records);
}

absl::StatusOr<ConsumeResult> RunRawConsumeBinary(const std::string& binary,
                                                  const std::string& bootstrap,
                                                  const std::string& topic,
                                                  const std::map<int32_t, int64_t>& start,
                                                  const std::map<int32_t, int64_t>& end) {
  std::vector<std::string> ranges;
  int64_t records = 0;
  for (const auto& [partition, offset] : start) {
    const auto e = end.find(partition);
    const int64_t last = e == end.end() ? offset : e->second;
    ranges.push_back(absl::StrCat(partition, ":", offset, ":", last));
    records += std::max<int64_t>(last - offset, 0);
  }
  return RunToDevNull({binary, absl::StrCat("--bootstrap=", bootstrap),
                       absl::StrCat("--topic=", topic),
                       absl::StrCat("--ranges=", absl::StrJoin(ranges, ","))},
                      records);
}

absl::StatusOr<ConsumeResult> ConsumeRaw(const std::string& bootstrap, const std::string& topic,
                                         const std::map<int32_t, int64_t>& start,
                                         const std::map<int32_t, int64_t>& end,
                                         absl::Duration timeout,
                                         const kafka::KafkaProperties& overrides) {
  kafka::KafkaProperties properties = kafka::WithConsumerDefaults(
      {{"bootstrap.servers", bootstrap}, {"group.id", "sluice-bench-raw"}},
      kafka::ClusterKind::kDevBroker);
  // The fetch tuning of KAFKA_DEV_BROKER.md, local queues included: the
  // fastest this client reads the dev broker (sluice's own defaults bound the
  // queues for memory; a consumer that keeps up never fills them).
  properties["queued.min.messages"] = "1000000";
  properties["queued.max.messages.kbytes"] = "1048576";
  for (const auto& [name, value] : overrides) properties[name] = value;
  const absl::Time started = absl::Now();
  const absl::Duration cpu_before = SelfCpu();
  SLUICE_ASSIGN_OR_RETURN(kafka::ConfPtr conf, kafka::BuildConf(properties, "bench raw"));
  SLUICE_ASSIGN_OR_RETURN(kafka::HandlePtr rk,
                          kafka::NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  rd_kafka_poll_set_consumer(rk.get());
  kafka::TopicPartitionListPtr list(rd_kafka_topic_partition_list_new(start.size()));
  int64_t wanted = 0;
  std::map<int32_t, int64_t> remaining;
  for (const auto& [partition, offset] : start) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = offset;
    const auto e = end.find(partition);
    const int64_t n = e == end.end() ? 0 : e->second - offset;
    if (n > 0) remaining[partition] = n;
    wanted += std::max<int64_t>(n, 0);
  }
  if (rd_kafka_resp_err_t err = rd_kafka_assign(rk.get(), list.get()); err) {
    return absl::InternalError(absl::StrCat("assign: ", rd_kafka_err2str(err)));
  }
  kafka::QueuePtr queue(rd_kafka_queue_get_consumer(rk.get()));
  std::vector<rd_kafka_message_t*> batch(10000);
  ConsumeResult result;
  absl::Status failure;
  const absl::Time deadline = started + timeout;
  uint64_t touched = 0;  // reads every payload's first byte, so none is skipped
  while (!remaining.empty() && failure.ok()) {
    if (absl::Now() > deadline) {
      failure = absl::DeadlineExceededError(absl::StrCat("raw consumer read ", result.records,
                                                         " of ", wanted, " records in ",
                                                         absl::FormatDuration(timeout)));
      break;
    }
    const ssize_t n = rd_kafka_consume_batch_queue(queue.get(), 100, batch.data(), batch.size());
    if (n < 0) {
      failure = absl::InternalError(
          absl::StrCat("consume_batch_queue: ", rd_kafka_err2str(rd_kafka_last_error())));
      break;
    }
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = batch[i];
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && failure.ok()) {
          failure = absl::InternalError(
              absl::StrCat("partition ", m->partition, ": ", rd_kafka_message_errstr(m)));
        }
      } else {
        ++result.records;
        result.bytes += static_cast<int64_t>(m->len);
        if (m->len > 0) touched += static_cast<const unsigned char*>(m->payload)[0];
        auto it = remaining.find(m->partition);
        if (it != remaining.end() && --it->second == 0) remaining.erase(it);
      }
      rd_kafka_message_destroy(m);
    }
  }
  result.elapsed = absl::Now() - started;
  rd_kafka_consumer_close(rk.get());
  result.cpu = SelfCpu() - cpu_before;  // librdkafka's threads included
  SLUICE_RETURN_IF_ERROR(failure);
  if (touched == 0 && result.records > 0) return absl::InternalError("every payload was empty");
  return result;
}

}  // namespace bench
}  // namespace sluice
