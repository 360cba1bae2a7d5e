// elasticd's command line: run the daemon, or ask a running one for its status.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>

#include "scheduler/common/toml_reader.h"
#include "scheduler/daemon/client.h"
#include "scheduler/daemon/daemon.h"

namespace po = boost::program_options;
using namespace elastic::daemon;

namespace {

constexpr const char* kDefaultConfig = ELASTIC_SYSCONFDIR "/elasticd.toml";

int Status(const po::variables_map& vm) {
  // The default config is optional for a client (a user may have no access to it).
  std::string config_path = vm["config"].as<std::string>();
  DaemonConfig config;
  if (!vm["config"].defaulted() || std::filesystem::exists(config_path)) {
    config = LoadDaemonConfig(config_path);
  }
  if (vm.count("socket")) config.socket = vm["socket"].as<std::string>();
  auto codec = MakeMungeCodec(config.munge_socket);
  nlohmann::json reply = SendRequest(config.socket, *codec, {{"op", "status"}});
  if (!reply.value("ok", false)) {
    std::cerr << "elasticd status: " << reply.value("error", "request refused") << "\n";
    return 1;
  }
  if (vm.count("json")) std::cout << reply.dump(2) << "\n";
  else std::cout << FormatStatus(reply);
  return 0;
}

int Main(int argc, char** argv) {
  po::options_description options("elasticd options");
  options.add_options()("help,h", "show this help")("version", "print the version")(
      "config,c", po::value<std::string>()->default_value(kDefaultConfig), "config file (TOML)")(
      "foreground,f", "stay in the foreground (for systemd and tests)")(
      "check", "validate the config file and exit")(
      "socket", po::value<std::string>(), "status: elasticd socket (overrides the config)")(
      "json", "status: print the raw JSON reply");
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::string>(), "subcommand");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("command", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "elasticd: " << e.what() << " (see elasticd --help)\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: elasticd [--config F] [--foreground] | elasticd status [--json]\n"
              << options;
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "elasticd " ELASTIC_VERSION "\n";
    return 0;
  }
  if (vm.count("command")) {
    std::string command = vm["command"].as<std::string>();
    if (command == "status") return Status(vm);
    std::cerr << "elasticd: unknown command \"" << command << "\": expected status\n";
    return 2;
  }
  DaemonConfig config = LoadDaemonConfig(vm["config"].as<std::string>());
  if (vm.count("check")) {
    std::cout << vm["config"].as<std::string>() << ": ok\n";
    return 0;
  }
  return RunDaemon(config, vm.count("foreground") > 0);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const elastic::ConfigError& e) {
    std::cerr << "elasticd: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "elasticd: " << e.what() << "\n";
    return 1;
  }
}
