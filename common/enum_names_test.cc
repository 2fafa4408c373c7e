#include "common/enum_names.h"

#include "gtest/gtest.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task_service.pb.h"

namespace sluice {
namespace {

TEST(EnumNamesTest, ShortNamesDropTheEnumPrefix) {
  EXPECT_EQ(ShortEnumName(v1::TASK_STATE_READING), "READING");
  EXPECT_EQ(ShortEnumName(v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM),
            "UNABLE_TO_CONNECT_TO_STREAM");
  EXPECT_EQ(ShortEnumName(v1::STOP_MODE_GRACEFUL), "GRACEFUL");
  EXPECT_EQ(ShortEnumName(v1::HANDOFF_STATE_HANDED_OFF), "HANDED_OFF");
  EXPECT_EQ(ShortEnumName(v1::TASK_STATE_UNSPECIFIED), "UNSPECIFIED");
  EXPECT_EQ(ShortEnumName(static_cast<v1::TaskState>(99)), "99");
}

TEST(EnumNamesTest, ParsesShortAndFullNamesInAnyCase) {
  v1::TaskState state = v1::TASK_STATE_UNSPECIFIED;
  EXPECT_TRUE(ParseShortEnumName("reading", &state));
  EXPECT_EQ(state, v1::TASK_STATE_READING);
  EXPECT_TRUE(ParseShortEnumName("TASK_STATE_PAUSED", &state));
  EXPECT_EQ(state, v1::TASK_STATE_PAUSED);
  EXPECT_FALSE(ParseShortEnumName("nope", &state));
  EXPECT_EQ(state, v1::TASK_STATE_PAUSED);
}

}  // namespace
}  // namespace sluice
