// The supervisor's loop: pump the step's output, poll elasticd, act on the state machine.
#include "agent/supervisor/supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/supervisor/allocation.h"
#include "agent/supervisor/generation_planner.h"
#include "agent/supervisor/plan_inputs.h"
#include "agent/supervisor/resize_state_machine.h"
#include "agent/supervisor/step_process.h"
#include "protocol/client.h"
#include "protocol/credential.h"
#include "protocol/messages.h"

namespace elastic::agent {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> terminate_signal{0};

// Slurm hands a batch job's SPANK options to every srun inside it as
// _SLURM_SPANK_OPTION_<plugin>_<option> variables (a plain word for the job's --elastic-plan),
// and the plugin then exports that word as the task's SLURM_ELASTIC_PLAN, over ours. Without
// the variable srun reads SLURM_ELASTIC_PLAN itself (the plugin's environment fallback).
std::vector<std::string> SpankPlanOptionVariables() {
  constexpr std::string_view kPrefix = "_SLURM_SPANK_OPTION_", kSuffix = "elastic_plan";
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    std::string_view name = text.substr(0, text.find('='));
    if (name.substr(0, kPrefix.size()) == kPrefix && name.size() >= kSuffix.size() &&
        name.substr(name.size() - kSuffix.size()) == kSuffix) {
      names.emplace_back(name);
    }
  }
  return names;
}

void OnTerminate(int signal_number) { terminate_signal.store(signal_number); }

class Supervisor {
 public:
  Supervisor(const SupervisorOptions& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err),
        codec_(daemon::MakeMungeCodec(options.munge_socket)),
        planner_(ReadPlanInputs(options.config_path, ProcessEnv()), ProcessEnv(),
                 [this](const std::string& text) { Note(text); }) {
    const char* id = std::getenv("SLURM_JOB_ID");
    const char* nodes = std::getenv("SLURM_JOB_NUM_NODES");
    if (!id || !nodes) {
      throw std::runtime_error("run: not inside a Slurm job (SLURM_JOB_ID is unset); submit "
                               "it with sbatch --elastic");
    }
    job_id_ = static_cast<std::uint32_t>(std::stoul(id));
    machine_ = std::make_unique<ResizeStateMachine>(std::stoi(nodes), options.max_restarts);
  }

  int Run() {
    const RanksPerNode& per_node = options_.ranks_per_node;
    Note("supervising job " + std::to_string(job_id_) + " on " +
         std::to_string(machine_->nodes()) + " node(s), " + std::to_string(per_node.ranks) +
         " rank(s) per node (" + (per_node.source.empty() ? "default" : per_node.source) +
         "), " + std::to_string(options_.ests) + " ESTs (" + options_.ests_origin + ")");
    Note("plan choice on every launch; performance model: " + planner_.model_source() +
         "; memory budget: " + planner_.budget_source());
    Register();
    Execute(machine_->Start());
    while (!Terminal()) {
      step_.Pump(std::chrono::milliseconds(200), out_, [this](const std::string& line) {
        planner_.OnLine(line);
      });
      if (pause_started_ && step_.first_step_seen()) EndPause();
      if (auto code = step_.TryWait()) OnStepEnded(*code);
      if (terminate_signal.load() && !forwarded_stop_) {
        Note("job is being stopped: asking the step to checkpoint and exit");
        step_.Signal(SIGUSR2);
        forwarded_stop_ = true;
      }
      if (Clock::now() >= next_poll_) Poll();
    }
    if (registered_) {
      Ask(daemon::DeregisterRequest{job_id_}, [](const nlohmann::json&) { return true; });
    }
    if (machine_->state() == SupervisorState::kFinished) return 0;  // even after restarts
    return exit_status_ != 0 ? exit_status_ : 1;
  }

 private:
  bool Terminal() const {
    return machine_->state() == SupervisorState::kFinished ||
           machine_->state() == SupervisorState::kFailed;
  }

  void Note(const std::string& text) { err_ << "elastic-agent run: " + text + "\n" << std::flush; }

  // One request and its typed reply; nullopt, with last_error_ set, when elasticd cannot be
  // reached, refuses, or answers malformed: the job trains on and asks again later.
  template <typename Request, typename Decode>
  auto Ask(const Request& request, Decode decode)
      -> std::optional<decltype(decode(std::declval<const nlohmann::json&>()))> {
    try {
      // A short deadline: this loop also forwards the step's output and its signals.
      nlohmann::json reply = daemon::SendRequest(options_.elasticd_socket, *codec_,
                                                 daemon::Encode(request), std::chrono::seconds(5));
      if (std::optional<std::string> refusal = daemon::RefusalIn(reply)) {
        last_error_ = *refusal;
        return std::nullopt;
      }
      return decode(reply);
    } catch (const std::exception& e) {
      last_error_ = e.what();
      return std::nullopt;
    }
  }

  void Register() {
    next_register_ = Clock::now() + std::chrono::seconds(10);
    auto reply = Ask(daemon::RegisterRequest{job_id_, options_.ests, options_.plan,
                                             options_.sla_class, machine_->generation()},
                     daemon::DecodeRegisterReply);
    if (!reply) {
      if (!warned_) Note("not registered with elasticd (" + last_error_ + "); training at a "
                         "fixed size meanwhile");
      warned_ = true;
      return;
    }
    registered_ = true;
    Note("registered with elasticd: nodes " + std::to_string(reply->min_nodes) + "-" +
         std::to_string(reply->max_nodes));
    planner_.SetMaxNodes(reply->max_nodes);
  }

  // A poll doubles as the progress report elasticd reads resize outcomes from.
  void Poll() {
    next_poll_ = Clock::now() + options_.poll_interval;
    if (!registered_) {
      if (Clock::now() >= next_register_) Register();
      if (!registered_) return;
    }
    daemon::PollRequest poll;
    poll.job_id = job_id_;
    poll.generation = machine_->generation();
    poll.seen_order = seen_order_;
    poll.state = ToString(machine_->state());
    poll.detail = detail_;
    poll.pause_s = last_pause_s_;
    poll.pause_generation = pause_generation_;
    planner_.AddPollFields(poll);  // the running plan, its prediction, the curve
    auto reply = Ask(poll, daemon::DecodePollReply);
    if (!reply) {
      if (last_error_.find("not registered") != std::string::npos) registered_ = false;
      return;  // elasticd restarting or gone: keep training, try again next poll
    }
    // An order waits (for a later poll) until the running step has done its first step: its
    // ranks install their checkpoint-signal handlers only after MPI start-up, so an earlier
    // SIGUSR2 would kill them instead of checkpointing (seen on the cluster: an order right
    // after the job started cost the step and the order). This also holds an order back while
    // the last one's relaunch is starting, so the step makes progress and each pause is
    // measured alone.
    if (!reply->order || forwarded_stop_ || order_received_ || !step_.first_step_seen()) {
      return;
    }
    const ResizeOrder& order = *reply->order;
    if (order.generation <= seen_order_) return;
    seen_order_ = order.generation;
    orders_[order.generation] = order;
    Note("order generation " + std::to_string(order.generation) + ": " +
         (order.grow ? "grow" : "shrink") + " to " + std::to_string(order.nodes()) +
         " node(s) (" + order.reason + ")");
    order_received_ = Clock::now();
    pause_kind_ = std::string(order.grow ? "grow " : "shrink ") +
                  std::to_string(machine_->nodes()) + " -> " + std::to_string(order.nodes());
    Execute(machine_->OnOrder(order));
  }

  void OnStepEnded(int code) {
    if (forwarded_stop_) {  // the job is being stopped: never relaunch, whatever the exit
      exit_status_ = code;
      Execute(machine_->OnStepStopped(code));
      return;
    }
    const bool resizing = machine_->state() == SupervisorState::kCheckpointing;
    if (resizing) phase_times_.checkpointed = Clock::now();
    if (code != 0) exit_status_ = code;
    const int restarts = machine_->restarts();
    if (code != 0) AdoptLostNodes();
    std::vector<Action> actions = machine_->OnStepExited(code, !resizing);
    if (machine_->restarts() > restarts) {
      // Relaunched after a failure, not resized: no pause to measure; a later success clears
      // the failing status.
      order_received_.reset();
      pause_started_ = false;
      Note("step exited " + std::to_string(code) + ": restart " +
           std::to_string(machine_->restarts()) + " of " + std::to_string(options_.max_restarts) +
           " on the same nodes from the newest checkpoint");
    }
    Execute(actions);
  }

  // A node that failed under a --no-kill job is removed from the allocation by Slurm, and the
  // step that ran on it fails: relaunch on the nodes that are left.
  void AdoptLostNodes() {
    try {
      AllocationView view = LookupAllocation(job_id_);
      if (view.nodes >= 1 && view.nodes < machine_->nodes()) {
        Note("Slurm removed " + std::to_string(machine_->nodes() - view.nodes) +
             " failed node(s) from the job; continuing on " + view.node_list);
        ExportAllocation(view);
        machine_->AdoptLostNodes(view.nodes);
      }
    } catch (const std::exception& e) {
      Note(std::string("cannot read the allocation after the step failed: ") + e.what());
    }
  }

  void Execute(const std::vector<Action>& actions) {
    for (const Action& action : actions) {
      switch (action.kind) {
        case ActionKind::kLaunchStep: Launch(action); break;
        case ActionKind::kCheckpointStep: step_.Signal(SIGUSR2); break;
        case ActionKind::kShrinkAllocation:
        case ActionKind::kGrowAllocation: Resize(action); break;
        case ActionKind::kReport:
          detail_ = action.detail;
          if (machine_->state() == SupervisorState::kFailed) Note(action.detail);
          next_poll_ = Clock::now();  // report now
          break;
      }
    }
  }

  void Resize(const Action& action) {
    const ResizeOrder& order = orders_.at(action.generation);
    Note("generation " + std::to_string(action.generation) + ": step checkpointed; " +
         (action.kind == ActionKind::kShrinkAllocation ? "shrinking" : "growing") +
         " the allocation to " + std::to_string(order.nodes()) + " node(s)");
    std::string error = action.kind == ActionKind::kShrinkAllocation
                            ? ShrinkTo(job_id_, order.target_nodes)
                            : GrowBy(job_id_, order.changed_nodes, options_.grow_wait_s);
    int nodes = 0;
    if (error.empty()) {
      try {
        AllocationView view = LookupAllocation(job_id_);
        ExportAllocation(view);
        nodes = view.nodes;
        if (nodes != order.nodes()) error = "allocation has " + std::to_string(nodes) + " nodes";
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (!error.empty()) Note("resize failed, relaunching on the current nodes: " + error);
    phase_times_.resized = Clock::now();
    if (error.empty() && action.kind == ActionKind::kShrinkAllocation) {
      last_shrink_ = phase_times_.resized;
    }
    Execute(machine_->OnAllocationResized(error.empty(), error.empty() ? nodes : 0));
  }

  void Launch(const Action& action) {
    if (action.credential_grace) {
      // A node shrunk away has the job's credential revoked at 1 s resolution (slurmd compares
      // whole seconds): a launch in the same second as the release is refused. Only the part of
      // 1.1 s since our last shrink that has not yet passed needs waiting.
      const auto safe = (last_shrink_ ? *last_shrink_ : Clock::now()) +
                        std::chrono::milliseconds(1100);
      if (safe > Clock::now()) std::this_thread::sleep_until(safe);
    }
    const std::string n = std::to_string(action.nodes);
    const int per_node = options_.ranks_per_node.ranks;
    const std::string ranks = std::to_string(action.nodes * per_node);
    Note("generation " + std::to_string(action.generation) + ": srun on " + n + " node(s) " +
         (std::getenv("SLURM_JOB_NODELIST") ? std::getenv("SLURM_JOB_NODELIST") : "") + ", " +
         ranks + " rank(s)");
    std::vector<std::pair<std::string, std::string>> plan_env = planner_.Choose(action.generation, action.nodes);
    std::vector<std::string> srun = {"srun", "--mpi=pmix", "-N", n, "-n", ranks,
                                     "--ntasks-per-node=" + std::to_string(per_node)};
    // Each rank its share of the node's CPUs (the smallest node's, after ExportAllocation).
    const char* cpus = std::getenv("SLURM_JOB_CPUS_PER_NODE");
    const int node_cpus = cpus ? MinCpusPerNode(cpus) : 0;
    for (std::string& flag : SrunCpuFlags(node_cpus, per_node)) {
      if (flag == "--overcommit") {
        Note(std::to_string(per_node) + " rank(s) per node on " + std::to_string(node_cpus) +
             " CPU(s) per node: srun --overcommit, the ranks share them (--cpus-per-gpu or "
             "--ntasks-per-node gives each rank CPUs of its own)");
      }
      srun.push_back(std::move(flag));
    }
    srun.insert(srun.end(), {"--kill-on-bad-exit=1", options_.agent_path, "train", "--config",
                             options_.config_path});
    step_.Launch(srun,
                 plan_env, plan_env.empty() ? std::vector<std::string>{}
                                            : SpankPlanOptionVariables());
    if (order_received_) pause_started_ = true;
  }

  // The pause and where it went: the step's checkpoint-and-exit, the allocation change (Slurm),
  // and the relaunch (srun, MPI start-up, resume from the checkpoint, first step).
  void EndPause() {
    const auto now = Clock::now();
    auto seconds = [](Clock::time_point from, Clock::time_point to) {
      return std::chrono::duration<double>(to - from).count();
    };
    last_pause_s_ = seconds(*order_received_, now);
    pause_generation_ = machine_->generation();
    char text[256];
    std::snprintf(text, sizeof text,
                  "resize pause %.2f s (%s: checkpoint %.2f s, allocation %.2f s, relaunch %.2f s;"
                  " order received -> first step done)",
                  last_pause_s_, pause_kind_.c_str(),
                  seconds(*order_received_, phase_times_.checkpointed),
                  seconds(phase_times_.checkpointed, phase_times_.resized),
                  seconds(phase_times_.resized, now));
    Note(text);
    pause_started_ = false;
    order_received_.reset();
    next_poll_ = Clock::now();
  }

  const SupervisorOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<daemon::CredentialCodec> codec_;
  GenerationPlanner planner_;  // each launch's plan, the refit, the curve for elasticd
  std::uint32_t job_id_ = 0;
  std::unique_ptr<ResizeStateMachine> machine_;
  StepProcess step_;
  std::map<std::uint64_t, ResizeOrder> orders_;  // by generation, until carried out
  std::uint64_t seen_order_ = 0;
  bool registered_ = false, warned_ = false, forwarded_stop_ = false, pause_started_ = false;
  std::string last_error_, detail_, pause_kind_;
  Clock::time_point next_poll_ = Clock::now(), next_register_ = Clock::now();
  std::optional<Clock::time_point> order_received_;
  double last_pause_s_ = 0.0;
  std::uint64_t pause_generation_ = 0;  // the generation last_pause_s_ was measured for
  struct {
    Clock::time_point checkpointed, resized;
  } phase_times_;
  std::optional<Clock::time_point> last_shrink_;
  int exit_status_ = 0;
};

}  // namespace

int RunSupervisor(const SupervisorOptions& options, std::ostream& out, std::ostream& err) {
  struct sigaction action = {};
  action.sa_handler = OnTerminate;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  Supervisor supervisor(options, out, err);
  return supervisor.Run();
}

}  // namespace elastic::agent
