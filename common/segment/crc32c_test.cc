#include "common/segment/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace sluice {
namespace segment {
namespace {

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);  // the standard check value
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);  // RFC 3720 B.4
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62a8ab43u);
  EXPECT_EQ(FormatCrc32c(0x1a2b3c4d), "crc32c:1a2b3c4d");
  EXPECT_EQ(FormatCrc32c(0xab), "crc32c:000000ab");
}

TEST(Crc32c, HardwareMatchesPortableAndExtendIsIncremental) {
  std::mt19937 rng(1);
  std::string data(10000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 1000, 10000}) {
    const std::string part = data.substr(0, n);
    EXPECT_EQ(Crc32c(part), internal::Crc32cExtendPortable(0, part.data(), n)) << n;
    for (size_t cut : {size_t{0}, n / 3, n}) {
      const uint32_t first = Crc32c(part.substr(0, cut));
      EXPECT_EQ(Crc32cExtend(first, part.data() + cut, n - cut), Crc32c(part));
    }
  }
}

TEST(Crc32c, CombineEqualsChecksumOfConcatenation) {
  std::mt19937 rng(2);
  std::string data(5000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t cut : {0, 1, 3, 8, 100, 4096, 4999, 5000}) {
    const absl::string_view a(data.data(), cut);
    const absl::string_view b(data.data() + cut, data.size() - cut);
    EXPECT_EQ(Crc32cCombine(Crc32c(a), Crc32c(b), b.size()), Crc32c(data)) << cut;
  }
}

}  // namespace
}  // namespace segment
}  // namespace sluice
