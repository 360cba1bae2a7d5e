// Tests for elastic-agent's command line: commands, help and version, and every usage error.
#include "agent/cli/command_line.h"

#include <gtest/gtest.h>

#include <regex>

#include "agent/common/errors.h"

namespace elastic::agent {
namespace {

std::string ErrorOf(const std::vector<std::string>& args) {
  try {
    ParseCommandLine(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string TextOf(const std::vector<std::string>& args) {
  Command command = ParseCommandLine(args);
  const auto* text = std::get_if<ShowText>(&command);
  return text == nullptr ? "(not text)" : text->text;
}

TEST(CommandLine, VersionAndHelp) {
  EXPECT_TRUE(
      std::regex_match(TextOf({"--version"}), std::regex("elastic-agent \\d+\\.\\d+\\.\\d+\n")));
  EXPECT_EQ(TextOf({"--version"}), "elastic-agent " + std::string(AgentVersion()) + "\n");
  std::string help = TextOf({"--help"});
  EXPECT_NE(help.find("Usage: elastic-agent"), std::string::npos);
  EXPECT_NE(help.find("train"), std::string::npos);
  EXPECT_EQ(TextOf({"-h"}), help);
  std::string train_help = TextOf({"train", "--help"});
  EXPECT_NE(train_help.find("--config"), std::string::npos);
  EXPECT_NE(train_help.find("--until-step"), std::string::npos);
  EXPECT_NE(train_help.find("without it nothing is written"), std::string::npos);
}

TEST(CommandLine, Train) {
  Command command = ParseCommandLine({"train", "--config", "job.toml"});
  ASSERT_TRUE(std::holds_alternative<TrainArgs>(command));
  EXPECT_EQ(std::get<TrainArgs>(command).config_path, "job.toml");
  EXPECT_FALSE(std::get<TrainArgs>(command).until_step);

  command = ParseCommandLine({"train", "-c", "a.toml", "--until-step", "40"});
  EXPECT_EQ(std::get<TrainArgs>(command).config_path, "a.toml");
  EXPECT_EQ(std::get<TrainArgs>(command).until_step, 40);
  command = ParseCommandLine({"train", "--until-step=7", "--config=b.toml"});
  EXPECT_EQ(std::get<TrainArgs>(command).until_step, 7);
}

TEST(CommandLine, Eval) {
  Command command = ParseCommandLine({"eval", "--config", "job.toml"});
  ASSERT_TRUE(std::holds_alternative<EvalArgs>(command));
  EXPECT_EQ(std::get<EvalArgs>(command).config_path, "job.toml");
  command = ParseCommandLine({"eval", "--help"});
  ASSERT_TRUE(std::holds_alternative<ShowText>(command));
  EXPECT_NE(std::get<ShowText>(command).text.find("Usage: elastic-agent eval"), std::string::npos);
}

TEST(CommandLine, Run) {
  Command command = ParseCommandLine({"run", "--config", "job.toml"});
  ASSERT_TRUE(std::holds_alternative<RunArgs>(command));
  EXPECT_EQ(std::get<RunArgs>(command).config_path, "job.toml");
  EXPECT_EQ(std::get<RunArgs>(command).socket, "");
  EXPECT_EQ(std::get<RunArgs>(command).max_restarts, 2);
  command = ParseCommandLine({"run", "-c", "a.toml", "--socket", "/s", "--max-restarts", "0"});
  EXPECT_EQ(std::get<RunArgs>(command).socket, "/s");
  EXPECT_EQ(std::get<RunArgs>(command).max_restarts, 0);
  EXPECT_EQ(ErrorOf({"run", "-c", "a", "--max-restarts", "-1"}),
            "--max-restarts -1: expected an integer from 0 to 100");
  EXPECT_NE(TextOf({"run", "--help"}).find("--max-restarts"), std::string::npos);
}

TEST(CommandLine, UsageErrors) {
  EXPECT_EQ(ErrorOf({}), "missing command (see elastic-agent --help)");
  EXPECT_EQ(ErrorOf({"evaluate"}),
            "unknown command \"evaluate\": expected train, eval, export, run or profile (see "
            "elastic-agent --help)");
  EXPECT_EQ(ErrorOf({"eval"}),
            "eval: the option '--config' is required but missing (see elastic-agent eval --help)");
  EXPECT_EQ(ErrorOf({"eval", "--config", "a", "--until-step", "3"}),
            "eval: unrecognised option '--until-step' (see elastic-agent eval --help)");
  EXPECT_EQ(ErrorOf({"--bogus"}), "unrecognised option '--bogus' (see elastic-agent --help)");
  EXPECT_EQ(
      ErrorOf({"train"}),
      "train: the option '--config' is required but missing (see elastic-agent train --help)");
  EXPECT_EQ(ErrorOf({"train", "--config"}),
            "train: the required argument for option '--config' is missing (see elastic-agent "
            "train --help)");
  EXPECT_EQ(ErrorOf({"train", "--config", "a", "--bogus"}),
            "train: unrecognised option '--bogus' (see elastic-agent train --help)");
  EXPECT_EQ(ErrorOf({"train", "--config", "a", "extra"}).rfind("train: too many positional", 0),
            0u);
  for (const char* bad : {"0", "-1", "x", "3x", "+3", ""}) {
    EXPECT_EQ(ErrorOf({"train", "--config", "a", "--until-step", bad}),
              "train: --until-step: invalid value \"" + std::string(bad) +
                  "\": expected an integer >= 1 (see elastic-agent train --help)")
        << bad;
  }
}

}  // namespace
}  // namespace elastic::agent
