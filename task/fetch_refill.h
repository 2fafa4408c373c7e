// When to wake librdkafka's fetcher after the consumer's local queue was full.
//
// librdkafka 2.0.2 stops fetching a partition while the consumer's local
// queue holds queued.min.messages records or queued.max.messages.kbytes, and
// looks again only when its broker thread next wakes up: when nothing else
// happens, up to a second later (2.2 added fetch.queue.backoff.ms for this).
// A task that reads slower than the broker serves, which is every task
// catching up, fills the queue, drains it, and then starves for the rest of
// that second: measured on the dev broker, a 2 us/record reader took 5 s for
// 20,000 records, with polls waiting 994 ms (kafka_consumer_test). With
// librdkafka 2.2 and later the pause is fetch.queue.backoff.ms, which the
// consumer defaults set to 2 ms (common/kafka/consumer_settings.h), and a
// wake-up cannot shorten it (the partition fetches again only once its backoff
// ran out): KafkaConsumer wakes the fetchers only when the library linked in
// is older (the benchmark's comparison build with Debian's 2.0.2).
//
// RefillTrigger watches the queue after each poll and says when it has gone
// from a limit down to half of it, so the consumer can wake the broker
// threads (KafkaConsumer does it with a ListOffsets request, which they serve)
// while half a queue of records is still there to read.
#ifndef SLUICE_TASK_FETCH_REFILL_H_
#define SLUICE_TASK_FETCH_REFILL_H_

#include <cstdint>

namespace sluice::task {

class RefillTrigger {
 public:
  // librdkafka's limits: queued.min.messages and queued.max.messages.kbytes
  // (in bytes here). Non-positive limits are treated as unlimited.
  RefillTrigger(int64_t max_messages, int64_t max_bytes)
      : max_messages_(max_messages), max_bytes_(max_bytes) {}

  // After a poll: the records still queued and the average size of the
  // records polled so far. True when the queue reached a limit since the last
  // true and is now at or below half of every limit.
  bool Observe(int64_t queued_messages, double average_record_bytes);

  // Whether the queue reached a limit since the last time Observe said true.
  bool was_full() const { return was_full_; }

 private:
  const int64_t max_messages_;
  const int64_t max_bytes_;
  bool was_full_ = false;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_FETCH_REFILL_H_
