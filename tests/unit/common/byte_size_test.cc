// Tests for config memory sizes.
#include "common/byte_size.h"

#include <gtest/gtest.h>

namespace elastic {
namespace {

TEST(ByteSize, ParsesBytesAndBinarySuffixes) {
  EXPECT_EQ(ParseByteSize("4096"), 4096);
  EXPECT_EQ(ParseByteSize("512K"), 512 * 1024);
  EXPECT_EQ(ParseByteSize("512k"), 512 * 1024);
  EXPECT_EQ(ParseByteSize("2M"), 2 * 1024 * 1024);
  EXPECT_EQ(ParseByteSize("2.5M"), 2'621'440);
  EXPECT_EQ(ParseByteSize("2.5MiB"), 2'621'440);
  EXPECT_EQ(ParseByteSize("16GB"), 16LL * 1024 * 1024 * 1024);
  EXPECT_EQ(ParseByteSize("1T"), 1LL << 40);
  EXPECT_EQ(ParseByteSize("0.001K"), 1);  // rounds down to whole bytes
}

TEST(ByteSize, RejectsMalformed) {
  for (const char* bad : {"", "M", "0", "0K", "-5M", "2.5", "1.5.2M", ".5M", "5.M", "5 M", "5X",
                          "5MB2", "5Mi", "1e6", "99999999999999999999", "9999999999T"}) {
    EXPECT_FALSE(ParseByteSize(bad).has_value()) << bad;
  }
}

TEST(ByteSize, FormatsForLogs) {
  EXPECT_EQ(FormatByteSize(512), "512 bytes");
  EXPECT_EQ(FormatByteSize(2'621'440), "2.50 MiB");
  EXPECT_EQ(FormatByteSize(3.0 * 1024 * 1024 * 1024), "3.00 GiB");
}

}  // namespace
}  // namespace elastic
