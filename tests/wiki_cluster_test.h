// The fixture of the in-process cluster tests over topic "wiki": a mock
// Kafka (real protocol, in process) with the topic, an in-process cluster
// (supervisor and workers on 127.0.0.1:0) reading it, and a SupervisorService
// stub to the supervisor.
//
//   class MyTest : public testing::WikiClusterTest {
//     void SetUp() override { StartWikiCluster(/*partitions=*/2); }
//   };
#ifndef SLUICE_TESTS_WIKI_CLUSTER_TEST_H_
#define SLUICE_TESTS_WIKI_CLUSTER_TEST_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/in_process_cluster.h"
#include "tests/task_mock_kafka.h"

namespace sluice::testing {

class WikiClusterTest : public ::testing::Test {
 protected:
  // The task workers read the mock as the dev broker (its consumer settings).
  void StartWikiCluster(int partitions, InProcessClusterOptions options = {}) {
    auto kafka = MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", partitions).ok());
    options.worker_knobs.kafka_cluster = kafka::ClusterKind::kDevBroker;
    auto cluster = InProcessCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    stub_ = v1::SupervisorService::NewStub(grpc::CreateChannel(
        cluster_->supervisor().address(), grpc::InsecureChannelCredentials()));
  }

  // Tasks of `datasource` placed on a worker, per the supervisor's status
  // (-1 if the status call fails).
  int PlacedTasks(const std::string& datasource) {
    v1::GetSupervisorStatusRequest ref;
    ref.set_datasource(datasource);
    v1::GetSupervisorStatusResponse response;
    grpc::ClientContext ctx;
    if (!stub_->GetSupervisorStatus(&ctx, ref, &response).ok()) return -1;
    int placed = 0;
    for (const auto& group : response.status().active_groups()) placed += group.tasks_size();
    return placed;
  }

  void TearDown() override {
    cluster_.reset();
    kafka_.reset();
  }

  std::unique_ptr<MockKafka> kafka_;
  std::unique_ptr<InProcessCluster> cluster_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_WIKI_CLUSTER_TEST_H_
