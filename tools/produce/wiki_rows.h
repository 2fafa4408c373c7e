// A seeded generator of Wikipedia-edit-like JSON records (about 214 bytes
// each): an ISO-8601 timestamp, six string dimensions of mixed cardinality
// (channel, page, user, namespace, countryName, isRobot) and three metrics
// (added, deleted, delta). The same seed gives the same records, so
// benchmarks, the demo and tests can share workloads.
//
//   WikiRowGenerator gen({.seed = 42});
//   std::string record = gen.Next();
#ifndef SLUICE_TOOLS_PRODUCE_WIKI_ROWS_H_
#define SLUICE_TOOLS_PRODUCE_WIKI_ROWS_H_

#include <cstdint>
#include <random>
#include <string>
#include <functional>
#include <vector>

#include "common/segment/schema.h"

namespace sluice {
namespace bench {

struct WikiRowOptions {
  uint64_t seed = 1;
  // Time of the first record; later ones advance by 0..2 * mean_step_ms.
  int64_t start_ms = 1796004000000;  // 2026-11-30T02:00:00Z
  int64_t mean_step_ms = 1;
  // Set: every record is stamped with the time this returns when it is
  // generated (ms since the epoch), start_ms and mean_step_ms unused; for
  // measuring how soon a record is readable after it was produced.
  std::function<int64_t()> live_clock_ms;
  // Distinct pages and users (pages and users follow a skewed distribution).
  int pages = 200000;
  int users = 30000;
  // Fraction of records that are broken (bad JSON, a missing or bad
  // timestamp, a non-numeric metric), for tests of error counting.
  double malformed_fraction = 0;
};

class WikiRowGenerator {
 public:
  explicit WikiRowGenerator(const WikiRowOptions& options);

  // The next record (JSON object text).
  std::string Next();
  // Appends the next record to `out` (no separator).
  void AppendNext(std::string* out);
  // Time of the last record generated.
  int64_t last_time_ms() const { return time_ms_; }
  // Records generated so far, and how many of them were malformed.
  uint64_t count() const { return count_; }
  uint64_t malformed() const { return malformed_; }

 private:
  size_t Skewed(size_t n);

  WikiRowOptions options_;
  std::mt19937_64 rng_;
  int64_t time_ms_;
  uint64_t count_ = 0;
  uint64_t malformed_ = 0;
};

// The schema of these records: the six dimensions listed, count plus
// longSum added/deleted and doubleSum delta, ISO timestamps; query
// granularity as given.
segment::Schema WikiSchema(bool rollup, Granularity query_granularity = Granularity());

// `n` records from `options`.
std::vector<std::string> WikiRecords(size_t n, const WikiRowOptions& options);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_TOOLS_PRODUCE_WIKI_ROWS_H_
