// elasticd's command line: run the daemon, or ask a running one for its status.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <optional>

#include "common/toml_reader.h"
#include "protocol/client.h"
#include "protocol/messages.h"
#include "scheduler/daemon/daemon.h"

namespace po = boost::program_options;
using namespace elastic::daemon;

namespace {

constexpr const char* kDefaultConfig = ELASTIC_SYSCONFDIR "/elasticd.toml";

// Sends one request as the calling user; prints the refusal and returns nullopt if refused.
std::optional<nlohmann::json> Ask(const po::variables_map& vm, const std::string& command,
                                  const nlohmann::json& request) {
  // The default config is optional for a client (a user may have no access to it).
  std::string config_path = vm["config"].as<std::string>();
  DaemonConfig config;
  if (!vm["config"].defaulted() || std::filesystem::exists(config_path)) {
    config = LoadDaemonConfig(config_path);
  }
  if (vm.count("socket")) config.socket = vm["socket"].as<std::string>();
  auto codec = MakeMungeCodec(config.munge_socket);
  nlohmann::json reply = SendRequest(config.socket, *codec, request);
  if (std::optional<std::string> refusal = RefusalIn(reply)) {
    std::cerr << "elasticd " << command << ": " << *refusal << "\n";
    return std::nullopt;
  }
  return reply;
}

int Status(const po::variables_map& vm) {
  auto reply = Ask(vm, "status", Encode(StatusRequest{}));
  if (!reply) return 1;
  if (vm.count("json")) std::cout << reply->dump(2) << "\n";  // the reply as elasticd sent it
  else std::cout << FormatStatus(DecodeStatusReply(*reply));
  return 0;
}

// Admin: order a job to a node count now (root or SlurmUser; elasticd checks the credential).
int Resize(const po::variables_map& vm) {
  if (!vm.count("job") || !vm.count("nodes")) {
    std::cerr << "elasticd resize: needs --job ID and --nodes N\n";
    return 2;
  }
  auto reply = Ask(vm, "resize", Encode(ResizeRequest{vm["job"].as<std::uint32_t>(),
                                                      vm["nodes"].as<int>()}));
  if (!reply) return 1;
  const ResizeOrder order = DecodeResizeReply(*reply).order;
  std::cout << "job " << vm["job"].as<std::uint32_t>() << ": order generation "
            << order.generation << ", " << (order.grow ? "grow" : "shrink") << " to "
            << order.nodes() << " node(s)\n";
  return 0;
}

// Debugging aid: one raw JSON request, sent with the caller's credential; prints the reply.
int Request(const po::variables_map& vm) {
  if (!vm.count("argument")) {
    std::cerr << "elasticd request: needs a JSON request, e.g. '{\"op\":\"status\"}'\n";
    return 2;
  }
  nlohmann::json request =
      nlohmann::json::parse(vm["argument"].as<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) {
    std::cerr << "elasticd request: the argument is not valid JSON\n";
    return 2;
  }
  auto reply = Ask(vm, "request", request);
  if (!reply) return 1;
  std::cout << reply->dump(2) << "\n";
  return 0;
}

int Main(int argc, char** argv) {
  po::options_description options("elasticd options");
  options.add_options()("help,h", "show this help")("version", "print the version")(
      "config,c", po::value<std::string>()->default_value(kDefaultConfig), "config file (TOML)")(
      "foreground,f", "stay in the foreground (for systemd and tests)")(
      "check", "validate the config file and exit")(
      "socket", po::value<std::string>(), "status: elasticd socket (overrides the config)")(
      "json", "status: print the raw JSON reply")(
      "job", po::value<std::uint32_t>(), "resize: the job id")(
      "nodes", po::value<int>(), "resize: the node count to order");
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::string>(), "subcommand")(
      "argument", po::value<std::string>(), "request: the JSON request");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("command", 1).add("argument", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "elasticd: " << e.what() << " (see elasticd --help)\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: elasticd [--config F] [--foreground]\n"
                 "       elasticd status [--json]              jobs, sizes, recent decisions\n"
                 "       elasticd resize --job ID --nodes N    order a resize (admin)\n"
                 "       elasticd request JSON                 send one raw request\n"
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
    if (command == "resize") return Resize(vm);
    if (command == "request") return Request(vm);
    std::cerr << "elasticd: unknown command \"" << command
              << "\": expected status, resize or request\n";
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
