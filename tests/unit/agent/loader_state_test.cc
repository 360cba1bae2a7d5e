// Tests for the per-EST data streams and the "loader" checkpoint record: pinned stream values,
// skipping, the record's round trip, and a refusal naming the problem for every kind of damage
// or mismatch.
#include "agent/data/loader_state.h"

#include <gtest/gtest.h>

#include "agent/data/est_data_stream.h"

namespace elastic::agent {
namespace {

TEST(EstDataStream, PinnedValuesAndSkipping) {
  // SplitMix64 reference values for state 0 (Vigna's splitmix64.c).
  EstDataStream zero(0);
  EXPECT_EQ(zero.Next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(zero.Next(), 0x6e789e6aa1b965f4ULL);
  EstDataStream a = EstDataStream::ForEst(1, 3);
  EstDataStream b = a;
  for (int i = 0; i < 5; ++i) a.Next();
  b.Skip(5);
  EXPECT_EQ(a.state(), b.state());
  EXPECT_EQ(a.Next(), b.Next());
  // Streams of other ESTs and seeds differ.
  EXPECT_NE(EstDataStream::ForEst(1, 3).state(), EstDataStream::ForEst(1, 4).state());
  EXPECT_NE(EstDataStream::ForEst(1, 3).state(), EstDataStream::ForEst(2, 3).state());
  EXPECT_EQ(EstDataStream::ForEst(1, 3).state(), EstDataStream::ForEst(1, 3).state());
}

std::vector<EstLoaderState> SampleStates() {
  return {{0, 0x0123456789abcdefULL, {{12, 3, 0xfedcba9876543210ULL}, {13, 3, 7}}},
          {1, 42, {{12, 3, 1}}},
          {2, 0xffffffffffffffffULL, {}}};
}

const LoaderExpectations kExpected{12, 3, 4, "flip"};

std::string SampleRecord() {
  return EncodeLoaderRecord(12, "flip", EncodeEstLoaderLines(SampleStates()));
}

std::string Problem(const std::string& text, LoaderExpectations expected = kExpected) {
  std::vector<EstLoaderState> out;
  return DecodeLoaderRecord(text, expected, &out);
}

TEST(LoaderRecord, RoundTripsAndIsReadable) {
  const std::string text = SampleRecord();
  EXPECT_EQ(text,
            "loader=1\nstep=12\naugment=flip\n"
            "est=0 stream=0123456789abcdef\npending=12 3 fedcba9876543210\n"
            "pending=13 3 0000000000000007\n"
            "est=1 stream=000000000000002a\npending=12 3 0000000000000001\n"
            "est=2 stream=ffffffffffffffff\n");
  std::vector<EstLoaderState> out;
  ASSERT_EQ(DecodeLoaderRecord(text, kExpected, &out), "");
  EXPECT_EQ(out, SampleStates());
  // Ranks encode their blocks separately; the concatenation is the same text.
  const auto states = SampleStates();
  EXPECT_EQ(EncodeEstLoaderLines(states), EncodeEstLoaderLines(std::span(states).first(1)) +
                                              EncodeEstLoaderLines(std::span(states).subspan(1)));
}

TEST(LoaderRecord, MismatchesAreRefusedNamingWhatDiffers) {
  const std::string text = SampleRecord();
  EXPECT_EQ(Problem(text, {13, 3, 4, "flip"}), "is for step 12 but the checkpoint is at step 13");
  EXPECT_EQ(Problem(text, {12, 3, 4, "none"}),
            "was written for augment=\"flip\", this run has \"none\"");
  EXPECT_EQ(Problem(text, {12, 4, 4, "flip"}), "has 3 ESTs: expected 4");
  // Another dataset size: the epochs of the pending batches do not fit.
  EXPECT_EQ(Problem(text, {12, 3, 5, "flip"}),
            "EST 0: pending batch of step 12 (epoch 3) where step 12 (epoch 2) was expected");
  EXPECT_EQ(Problem("loader=2\nstep=12\naugment=flip\n"),
            "has version 2: this elastic-agent reads version 1");
}

TEST(LoaderRecord, DamageIsRefused) {
  const std::string text = SampleRecord();
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string copy = text;
    copy.replace(copy.find(from), from.size(), to);
    return copy;
  };
  EXPECT_EQ(Problem(text.substr(0, text.size() - 1)),
            "does not end with a line break (truncated?)");
  EXPECT_EQ(Problem("step=12\n"), "does not start with \"loader=<version>\"");
  EXPECT_EQ(Problem(replaced("est=1 ", "est=2 ")),
            "EST 2 where EST 1 was expected (every EST once, in id order)");
  EXPECT_EQ(Problem(replaced("pending=13", "pending=14")),
            "EST 0: pending batch of step 14 (epoch 3) where step 13 (epoch 3) was expected");
  EXPECT_EQ(Problem(replaced("stream=000000000000002a", "stream=2a")),
            "malformed line \"est=1 stream=2a\"");
  EXPECT_EQ(Problem(replaced("fedcba9876543210", "fedcba987654321g")),
            "malformed line \"pending=12 3 fedcba987654321g\"");
  EXPECT_EQ(Problem(text + "extra=1\n"), "unexpected line 10 \"extra=1\"");
  // A pending line before any EST line belongs to nobody.
  EXPECT_EQ(Problem("loader=1\nstep=12\naugment=flip\npending=12 3 0000000000000001\n"),
            "unexpected line 4 \"pending=12 3 0000000000000001\"");
  // Dropping the last EST's lines: the count catches it.
  EXPECT_EQ(Problem(text.substr(0, text.find("est=2"))), "has 2 ESTs: expected 3");
}

}  // namespace
}  // namespace elastic::agent
