#include "supervisor/testing/test_util.h"

#include <glog/logging.h>
#include <stdlib.h>

#include "common/file_util.h"
#include "common/spec.h"
#include "supervisor/testing/test_store.h"

namespace sluice::supervisor::testing {

TempDir::TempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/sluice_XXXXXX";
  CHECK(mkdtemp(tmpl.data()) != nullptr);
  path_ = tmpl;
}

TempDir::~TempDir() { RemoveAll(path_).IgnoreError(); }

v1::SupervisorSpec TestSpec(const std::string& datasource, const std::string& topic, int task_count,
                            int replicas) {
  v1::SupervisorSpec spec;
  spec.set_datasource(datasource);
  v1::IoConfig* io = spec.mutable_io_config();
  io->set_topic(topic);
  (*io->mutable_consumer_properties())["bootstrap.servers"] = "127.0.0.1:9";
  io->set_task_count(task_count);
  io->set_replicas(replicas);
  io->set_task_duration("PT1H");
  io->set_start_delay("PT0S");
  io->set_period("PT1S");
  io->set_completion_timeout("PT30M");
  io->set_use_earliest_offset(true);
  spec.mutable_data_schema()->mutable_granularity_spec()->set_segment_granularity("HOUR");
  v1::MetricSpec* count = spec.mutable_data_schema()->add_metrics_spec();
  count->set_type("count");
  count->set_name("count");
  spec.mutable_tuning_config()->set_chat_timeout("PT0.5S");
  spec.mutable_tuning_config()->set_chat_retries(2);
  auto normalized = NormalizeSpec(spec);
  CHECK(normalized.ok()) << normalized.status();
  return *normalized;
}

std::unique_ptr<MetadataStore> OpenTestStore(const std::string& dir) {
  auto options = TestStoreOptions(TestStoreBackend(), dir);
  CHECK(options.ok()) << options.status();
  auto store = MetadataStore::Open(*options);
  CHECK(store.ok()) << store.status();
  return std::move(*store);
}

}  // namespace sluice::supervisor::testing
