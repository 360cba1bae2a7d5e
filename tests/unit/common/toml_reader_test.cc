// Tests for strict TOML reading: types, ranges, unknown keys with their line numbers.
#include "common/toml_reader.h"

#include <gtest/gtest.h>

namespace elastic {
namespace {

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TomlReader, ReadsTypedValues) {
  auto reader = TomlReader::FromString(
      "[a]\nname = \"x\"\ncount = 3\nrate = 0.5\non = true\nwait = \"2s\"\n", "t.toml");
  EXPECT_EQ(reader.String("a.name"), "x");
  EXPECT_EQ(reader.Integer("a.count", 1, 10), 3);
  EXPECT_EQ(reader.Double("a.rate", 0, 1), 0.5);
  EXPECT_EQ(reader.Bool("a.on"), true);
  EXPECT_EQ(reader.Duration("a.wait"), std::chrono::milliseconds(2000));
  EXPECT_FALSE(reader.String("a.absent").has_value());
  EXPECT_NO_THROW(reader.RejectUnknownKeys());
}

TEST(TomlReader, IntegerAcceptedWhereNumberExpected) {
  auto reader = TomlReader::FromString("lr = 1\n", "t.toml");
  EXPECT_EQ(reader.Double("lr", 0, 2), 1.0);
}

struct BadCase {
  const char* text;
  std::function<void(TomlReader&)> read;
  const char* expected;
};

TEST(TomlReader, InvalidInputTable) {
  const std::vector<BadCase> cases = {
      {"x = [\n", [](TomlReader&) {}, "t.toml:"},
      {"\n\n[a]\ncount = \"3\"\n", [](TomlReader& r) { r.Integer("a.count", 1, 10); },
       "t.toml:4: a.count: expected an integer from 1 to 10"},
      {"[a]\ncount = 11\n", [](TomlReader& r) { r.Integer("a.count", 1, 10); },
       "t.toml:2: a.count: invalid value 11: expected an integer from 1 to 10"},
      {"[a]\nrate = 1.5\n", [](TomlReader& r) { r.Double("a.rate", 0, 1); },
       "t.toml:2: a.rate: invalid value 1.5: expected a number from 0 to 1"},
      {"[a]\nrate = nan\n", [](TomlReader& r) { r.Double("a.rate", 0, 1); },
       "a.rate: invalid value nan"},
      {"[a]\non = 1\n", [](TomlReader& r) { r.Bool("a.on"); }, "a.on: expected true or false"},
      {"[a]\nname = 3\n", [](TomlReader& r) { r.String("a.name"); }, "a.name: expected a string"},
      {"[a]\nwait = \"2 s\"\n", [](TomlReader& r) { r.Duration("a.wait"); },
       "t.toml:2: a.wait: invalid duration \"2 s\""},
      {"[a]\nname = \"x\"\n\n[b]\nzeta = 1\nalpha = 2\n",
       [](TomlReader& r) {
         r.String("a.name");
         r.RejectUnknownKeys();
       },
       "t.toml:5: b.zeta: unknown key"},
  };
  for (const auto& c : cases) {
    std::string error = ErrorOf([&] {
      auto reader = TomlReader::FromString(c.text, "t.toml");
      c.read(reader);
    });
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "input:\n" << c.text << "\nerror: " << error << "\nexpected: " << c.expected;
  }
}

TEST(TomlReader, MissingFileNamesPath) {
  std::string error = ErrorOf([] { TomlReader::FromFile("/nonexistent/x.toml"); });
  EXPECT_NE(error.find("/nonexistent/x.toml: cannot read config file"), std::string::npos);
}

TEST(TomlReader, FailPointsAtTheKeysLine) {
  auto reader = TomlReader::FromString("[m]\n\nname = \"y\"\n", "c.toml");
  std::string error = ErrorOf([&] { reader.Fail("m.name", "unknown model"); });
  EXPECT_EQ(error, "c.toml:3: m.name: unknown model");
}

}  // namespace
}  // namespace elastic
