// elasticd under load (issue 7): C concurrent clients on elasticd's UNIX socket for S seconds.
// Most clients loop over a weighted mix of requests, each on its own connection as the protocol
// says: real MUNGE-sealed `status` and `register` (refused: no such job, or not the caller's),
// and hostile ones: garbage bytes, tampered credentials, replayed credentials, a line over
// 64 KiB, a payload over 16 KiB. A few clients (--slow-clients) connect and stall: they say
// nothing, or half a credential, and wait for elasticd to cut them off. Prints per kind: count,
// outcome (as expected / wrong reply / no reply / timeout / connect error), requests/s and
// p50/p99/max latency (connect to reply; the client's own munge_encode is timed apart), and
// elasticd's VmRSS and open fds (/proc/PID) at start, every few seconds and at the end.
// Exit status 1 when the daemon died, stopped answering, kept fds after the load, or answered
// some request other than as the protocol says; 2 on usage errors. No pass/fail on speed.
// --slurm-stopped (slurmctld frozen meanwhile): a register may wait for Slurm past the client's
// 30 s, and the fds of those still waiting are not counted as leaked.
//
// Usage: elasticd_load --socket S [--munge-socket M] [--clients 200] [--seconds 60] [--pid PID]
//                      [--job-id J] [--slow-clients K] [--sample-every 2] [--slurm-stopped]
// bench/elasticd_load.sh starts munged, Slurm and elasticd around it and tears them down.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/credential.h"
#include "protocol/protocol.h"

namespace {

using Clock = std::chrono::steady_clock;
using elastic::daemon::CredentialCodec;
using elastic::daemon::kMaxPayloadBytes;
using elastic::daemon::kMaxRequestLineBytes;

// Longer than anything elasticd should take (its own client timeout is 5 s).
constexpr std::chrono::seconds kReplyTimeout{30};

struct Options {
  std::string socket;
  std::string munge_socket;  // empty: libmunge's default
  int clients = 200;
  int slow_clients = -1;  // -1: 5% of the clients
  double seconds = 60;
  long pid = 0;                // elasticd, for /proc sampling; 0: no sampling
  std::uint32_t job_id = 0;    // a job some other user owns (register: "belongs to another user")
  double sample_every_s = 2;
  bool slurm_stopped = false;  // slurmctld frozen for the run: registers wait on it
};

enum Kind {
  kStatus, kRegister, kGarbage, kBadCredential, kReplay, kOversizedLine, kOversizedPayload,
  kSilent, kHalfLine, kKindCount
};

// `weight`: share of the request mix (the two stalling kinds run on the slow clients);
// `expect`: a substring of the reply the protocol promises (docs/protocol.md), "" = no reply.
struct KindInfo {
  const char* name;
  int weight;
  std::vector<const char*> expect;
};
const KindInfo kKinds[kKindCount] = {
    {"status", 40, {"\"ok\":true"}},
    // Refused whatever the reason, but always with a reason about the job or Slurm.
    {"register", 20, {"not known to Slurm", "belongs to another user", "is not running",
                      "Slurm"}},
    {"garbage", 8, {"MUNGE credential refused"}},
    {"bad_cred", 8, {"MUNGE credential refused"}},
    {"replay", 8, {"Replayed credential"}},
    {"oversized_line", 3, {"request line longer than"}},
    {"oversized_payload", 3, {"request too large"}},
    {"silent", 0, {}},
    {"half_line", 0, {}},
};

enum Outcome { kExpected, kWrongReply, kNoReply, kTimeout, kConnectError, kOutcomeCount };
const char* const kOutcomeNames[kOutcomeCount] = {"expected", "wrong", "no-reply", "timeout",
                                                  "conn-err"};

struct Exchange {
  Outcome outcome = kExpected;
  double ms = 0;
  std::string reply;  // the reply line, or what went wrong
};

struct Stats {
  std::vector<float> ms[kKindCount];
  long outcomes[kKindCount][kOutcomeCount] = {};
  std::map<std::string, long> replies[kKindCount];  // reply text (digits as #) -> count
  std::vector<float> encode_ms;

  void Add(Kind kind, const Exchange& e) {
    ms[kind].push_back(static_cast<float>(e.ms));
    ++outcomes[kind][e.outcome];
    std::string key;  // runs of digits (job ids, sizes, uptime) as one #
    for (char c : e.reply.substr(0, 160)) {
      const bool digit = c >= '0' && c <= '9';
      if (!digit) key += c;
      else if (key.empty() || key.back() != '#') key += '#';
    }
    ++replies[kind][key];
  }
  void Merge(const Stats& other) {
    for (int k = 0; k < kKindCount; ++k) {
      ms[k].insert(ms[k].end(), other.ms[k].begin(), other.ms[k].end());
      for (int o = 0; o < kOutcomeCount; ++o) outcomes[k][o] += other.outcomes[k][o];
      for (const auto& [text, n] : other.replies[k]) replies[k][text] += n;
    }
    encode_ms.insert(encode_ms.end(), other.encode_ms.begin(), other.encode_ms.end());
  }
};

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// --- one connection ----------------------------------------------------------------------

int Connect(const std::string& path, std::string& error) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  timeval tv{kReplyTimeout.count(), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // also bounds connect()
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    error = std::string("connect: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `data` (elasticd may close early, e.g. on an oversized line: that is not an error here,
// the reply it sent before closing is still readable).
void SendAll(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
}

// One request: connect, send `line` as is, read one reply line or EOF. Timed end to end.
Exchange Send(const std::string& socket, const std::string& line, const KindInfo& kind) {
  Exchange e;
  const Clock::time_point start = Clock::now();
  std::string error;
  int fd = Connect(socket, error);
  if (fd < 0) {
    e.outcome = kConnectError;
    e.reply = error;
    e.ms = MsSince(start);
    return e;
  }
  SendAll(fd, line);
  std::string reply;
  char buffer[4096];
  bool timed_out = false;
  while (reply.find('\n') == std::string::npos && reply.size() < (1u << 20)) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) timed_out = true;
    if (n <= 0) break;  // EOF (or reset): whatever came before it is the reply
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  e.ms = MsSince(start);
  ::close(fd);
  if (auto nl = reply.find('\n'); nl != std::string::npos) reply.resize(nl);
  e.reply = reply;
  if (timed_out) {
    e.outcome = kTimeout;
    e.reply = "no reply within " + std::to_string(kReplyTimeout.count()) + " s";
  } else if (kind.expect.empty()) {  // a stalling client: elasticd must close without a word
    e.outcome = reply.empty() ? kExpected : kWrongReply;
    if (reply.empty()) e.reply = "(closed by elasticd)";
  } else if (reply.empty()) {
    e.outcome = kNoReply;
    e.reply = "(closed without a reply)";
  } else {
    const bool ok_json = nlohmann::json::accept(reply);
    const bool match = std::any_of(kind.expect.begin(), kind.expect.end(), [&](const char* s) {
      return reply.find(s) != std::string::npos;
    });
    e.outcome = ok_json && match ? kExpected : kWrongReply;
  }
  return e;
}

// --- clients -------------------------------------------------------------------------------

class Client {
 public:
  Client(const Options& options, int index)
      : options_(options),
        rng_(0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(index + 1)),
        codec_(elastic::daemon::MakeMungeCodec(options.munge_socket)) {}

  void RunMix(Clock::time_point deadline) {
    int total = 0;
    for (const KindInfo& k : kKinds) total += k.weight;
    while (Clock::now() < deadline) {
      int pick = static_cast<int>(rng_() % static_cast<std::uint64_t>(total));
      int kind = 0;
      while (pick >= kKinds[kind].weight) pick -= kKinds[kind++].weight;
      Request(static_cast<Kind>(kind));
    }
  }

  void RunStalling(Clock::time_point deadline) {
    for (int i = 0; Clock::now() < deadline; ++i) Request(i % 2 == 0 ? kSilent : kHalfLine);
  }

  Stats& stats() { return stats_; }
  long encode_failures() const { return encode_failures_; }

 private:
  // A fresh credential sealing `payload`; "" (and an encode failure recorded) if munged refused.
  std::string Seal(const nlohmann::json& payload) {
    std::string error;
    const Clock::time_point start = Clock::now();
    std::string credential = codec_->Encode(payload.dump(), error);
    stats_.encode_ms.push_back(static_cast<float>(MsSince(start)));
    if (credential.empty()) ++encode_failures_;
    return credential;
  }

  void Request(Kind kind) {
    std::string line;
    std::string credential;
    switch (kind) {
      case kStatus:
        credential = Seal({{"op", "status"}});
        line = credential + "\n";
        break;
      case kRegister: {
        // Half for the given job (someone else's), half for ids Slurm has never seen.
        std::uint32_t id = options_.job_id != 0 && rng_() % 2 == 0
                               ? options_.job_id
                               : static_cast<std::uint32_t>(1 + rng_() % 1'000'000'000);
        line = Seal({{"op", "register"}, {"job_id", id}, {"ests", 4}, {"plan", "auto"},
                     {"class", "best-effort"}, {"generation", 1}}) + "\n";
        break;
      }
      case kGarbage: {
        line.resize(1 + rng_() % 4096);
        for (char& c : line) c = static_cast<char>(rng_() % 255 + 1);
        std::replace(line.begin(), line.end(), '\n', 'x');
        line += "\n";
        break;
      }
      case kBadCredential: {
        line = Seal({{"op", "status"}});
        if (line.size() > 16) {  // flip one base64 character in the middle
          char& c = line[line.size() / 2];
          c = c == 'A' ? 'B' : 'A';
        }
        line += "\n";
        break;
      }
      case kReplay:
        if (accepted_.empty()) Request(kStatus);  // leaves an accepted credential behind
        line = accepted_ + "\n";
        accepted_.clear();
        break;
      case kOversizedLine:
        line.assign(kMaxRequestLineBytes + 4096, 'A');
        line += "\n";
        break;
      case kOversizedPayload:
        line = Seal({{"op", "status"}, {"pad", std::string(kMaxPayloadBytes + 1024, 'x')}}) +
               "\n";
        break;
      case kSilent:
        break;
      case kHalfLine:
        line = Seal({{"op", "status"}});
        line.resize(line.size() / 2);
        break;
      case kKindCount:
        return;
    }
    Exchange e = Send(options_.socket, line, kKinds[kind]);
    if (kind == kStatus && e.outcome == kExpected) accepted_ = credential;
    stats_.Add(kind, e);
  }

  const Options& options_;
  std::mt19937_64 rng_;
  std::unique_ptr<CredentialCodec> codec_;
  std::string accepted_;  // a credential elasticd has accepted once: the next replay sends it
  Stats stats_;
  long encode_failures_ = 0;
};

// --- elasticd's footprint --------------------------------------------------------------------

struct Sample {
  double t_s = 0;
  long rss_kib = -1;
  long fds = -1;  // -1: /proc/PID/fd not readable (elasticd runs as another user)
  double cpu_s = -1;
};

Sample TakeSample(long pid, Clock::time_point t0) {
  Sample s;
  s.t_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kib = std::atol(line.c_str() + 6);
  }
  std::error_code ec;
  long fds = 0;
  for (std::filesystem::directory_iterator it(proc + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++fds;
  }
  if (!ec) s.fds = fds;
  std::ifstream stat(proc + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (auto paren = text.rfind(')'); paren != std::string::npos) {
    std::istringstream fields(text.substr(paren + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; fields >> field && i <= 15; ++i) {  // utime and stime are fields 14 and 15
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    s.cpu_s = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return s;
}

bool Alive(long pid) { return std::filesystem::exists("/proc/" + std::to_string(pid) + "/status"); }

// --- report ---------------------------------------------------------------------------------

double Percentile(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  const auto rank = static_cast<std::size_t>(p * static_cast<double>(v.size()));
  const std::size_t i = std::min(v.size() - 1, rank);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

double Max(const std::vector<float>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

void PrintRow(const char* name, std::vector<float> ms, const long* outcomes, double seconds) {
  std::printf("%-18s %8zu", name, ms.size());
  for (int o = 0; o < kOutcomeCount; ++o) std::printf(" %8ld", outcomes[o]);
  const double p50 = Percentile(ms, 0.50), p99 = Percentile(ms, 0.99);
  std::printf(" %9.1f %9.2f %9.2f %9.2f\n", static_cast<double>(ms.size()) / seconds, p50, p99,
              Max(ms));
}

// Returns the number of requests answered other than as the protocol says.
long PrintTable(Stats& s, double seconds, bool slurm_stopped) {
  std::printf("%-18s %8s", "kind", "sent");
  for (const char* o : kOutcomeNames) std::printf(" %8s", o);
  std::printf(" %9s %9s %9s %9s\n", "req/s", "p50 ms", "p99 ms", "max ms");
  std::vector<float> all;
  long all_outcomes[kOutcomeCount] = {};
  long failures = 0;
  for (int k = 0; k < kKindCount; ++k) {
    PrintRow(kKinds[k].name, s.ms[k], s.outcomes[k], seconds);
    for (int o = 0; o < kOutcomeCount; ++o) all_outcomes[o] += s.outcomes[k][o];
    for (int o = kWrongReply; o < kOutcomeCount; ++o) {
      if (!(slurm_stopped && k == kRegister && o == kTimeout)) failures += s.outcomes[k][o];
    }
    if (kKinds[k].weight > 0) all.insert(all.end(), s.ms[k].begin(), s.ms[k].end());
  }
  long mix_outcomes[kOutcomeCount] = {};
  for (int k = 0; k < kKindCount; ++k) {
    if (kKinds[k].weight == 0) continue;
    for (int o = 0; o < kOutcomeCount; ++o) mix_outcomes[o] += s.outcomes[k][o];
  }
  PrintRow("all but stalling", all, mix_outcomes, seconds);
  std::vector<float> encode = s.encode_ms;
  std::printf("client-side munge_encode (not in the latencies above): %zu calls, p50 %.2f ms, "
              "p99 %.2f ms, max %.2f ms\n",
              encode.size(), Percentile(encode, 0.5), Percentile(encode, 0.99), Max(encode));
  std::printf("replies (numbers shown as #), most frequent per kind:\n");
  for (int k = 0; k < kKindCount; ++k) {
    std::vector<std::pair<long, std::string>> top;
    for (const auto& [text, n] : s.replies[k]) top.emplace_back(n, text);
    std::sort(top.rbegin(), top.rend());
    for (std::size_t i = 0; i < top.size() && i < 3; ++i) {
      std::printf("  %-18s %8ld  %s\n", kKinds[k].name, top[i].first, top[i].second.c_str());
    }
  }
  return failures;
}

void PrintFootprint(const std::vector<Sample>& samples, long pid) {
  if (samples.empty()) return;
  const Sample& first = samples.front();
  const Sample& last = samples.back();
  long max_rss = 0, max_fds = -1;
  for (const Sample& s : samples) {
    max_rss = std::max(max_rss, s.rss_kib);
    max_fds = std::max(max_fds, s.fds);
  }
  std::printf("elasticd pid %ld: VmRSS start %ld KiB, max %ld KiB, end %ld KiB (growth %+ld KiB)\n",
              pid, first.rss_kib, max_rss, last.rss_kib, last.rss_kib - first.rss_kib);
  if (first.fds >= 0) {
    std::printf("elasticd open fds: start %ld, max %ld, end %ld\n", first.fds, max_fds, last.fds);
  } else {
    std::printf("elasticd open fds: /proc/%ld/fd not readable by this user\n", pid);
  }
  const double span = last.t_s - first.t_s;
  if (span > 0 && first.cpu_s >= 0) {
    std::printf("elasticd CPU: %.1f s in %.1f s (%.0f%% of one core)\n", last.cpu_s - first.cpu_s,
                span, 100 * (last.cpu_s - first.cpu_s) / span);
  }
  std::printf("samples (s: RSS KiB / fds):");
  for (const Sample& s : samples) std::printf(" %.0f:%ld/%ld", s.t_s, s.rss_kib, s.fds);
  std::printf("\n");
}

bool ParseOptions(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--slurm-stopped") {
      o.slurm_stopped = true;
      continue;
    }
    if (flag == "--help" || flag == "-h" || i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (flag == "--socket") o.socket = value;
    else if (flag == "--munge-socket") o.munge_socket = value;
    else if (flag == "--clients") o.clients = std::atoi(value.c_str());
    else if (flag == "--slow-clients") o.slow_clients = std::atoi(value.c_str());
    else if (flag == "--seconds") o.seconds = std::atof(value.c_str());
    else if (flag == "--pid") o.pid = std::atol(value.c_str());
    else if (flag == "--job-id") o.job_id = static_cast<std::uint32_t>(std::atol(value.c_str()));
    else if (flag == "--sample-every") o.sample_every_s = std::atof(value.c_str());
    else return false;
  }
  if (o.slow_clients < 0) o.slow_clients = o.clients / 20;
  return !o.socket.empty() && o.clients >= 1 && o.slow_clients < o.clients && o.seconds > 0 &&
         o.sample_every_s > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) {
    std::cerr << "usage: elasticd_load --socket S [--munge-socket M] [--clients 200] "
                 "[--seconds 60] [--pid PID] [--job-id J] [--slow-clients K] "
                 "[--sample-every 2] [--slurm-stopped]\n";
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  std::printf("elasticd load: %d clients (%d mixing requests, %d stalling) for %.0f s on %s\n",
              o.clients, o.clients - o.slow_clients, o.slow_clients, o.seconds, o.socket.c_str());
  std::fflush(stdout);

  const Clock::time_point t0 = Clock::now();
  std::vector<Sample> samples;
  std::atomic<bool> load_over{false};
  std::thread sampler;
  if (o.pid > 0) {
    samples.push_back(TakeSample(o.pid, t0));
    sampler = std::thread([&] {
      Clock::time_point next = t0;
      while (!load_over) {
        next += std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(o.sample_every_s));
        while (!load_over && Clock::now() < next) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!load_over) samples.push_back(TakeSample(o.pid, t0));
      }
    });
  }

  const Clock::time_point deadline =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < o.clients; ++i) clients.push_back(std::make_unique<Client>(o, i));
  std::vector<std::thread> stalling, mixing;
  for (int i = 0; i < o.clients; ++i) {
    if (i < o.slow_clients) stalling.emplace_back([&, i] { clients[i]->RunStalling(deadline); });
    else mixing.emplace_back([&, i] { clients[i]->RunMix(deadline); });
  }
  for (std::thread& t : mixing) t.join();
  // Rates are over the mixing clients' time; a stall begun just before the deadline ends later.
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  for (std::thread& t : stalling) t.join();
  load_over = true;
  if (sampler.joinable()) sampler.join();

  std::vector<std::string> failures;
  if (o.pid > 0) {
    // elasticd closes its side when it has answered: give it its client timeout to settle.
    const long fds_before = samples.front().fds;
    for (int i = 0; i < 70; ++i) {
      Sample s = TakeSample(o.pid, t0);
      if (s.fds <= fds_before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    samples.push_back(TakeSample(o.pid, t0));
    if (!Alive(o.pid)) failures.push_back("elasticd (pid " + std::to_string(o.pid) + ") died");
    if (samples.back().fds > fds_before && !o.slurm_stopped) {
      failures.push_back("elasticd holds " + std::to_string(samples.back().fds - fds_before) +
                         " more fds than before the load");
    }
  }
  Stats total;
  long encode_failures = 0;
  for (auto& c : clients) {
    total.Merge(c->stats());
    encode_failures += c->encode_failures();
  }
  std::printf("\n%.1f s of load\n", seconds);
  const long bad = PrintTable(total, seconds, o.slurm_stopped);
  if (bad > 0) failures.push_back(std::to_string(bad) + " request(s) not answered as expected");
  if (encode_failures > 0) {
    failures.push_back(std::to_string(encode_failures) + " client-side munge_encode failure(s)");
  }
  PrintFootprint(samples, o.pid);

  Exchange check = Send(o.socket, [&] {
    std::string error;
    auto codec = elastic::daemon::MakeMungeCodec(o.munge_socket);
    return codec->Encode(R"({"op":"status"})", error) + "\n";
  }(), kKinds[kStatus]);
  std::printf("status after the load: %s (%.2f ms)\n", kOutcomeNames[check.outcome], check.ms);
  if (check.outcome != kExpected) failures.push_back("status after the load: " + check.reply);

  if (failures.empty()) {
    std::printf("verdict: PASS\n");
    return 0;
  }
  for (const std::string& f : failures) std::printf("verdict: FAIL: %s\n", f.c_str());
  return 1;
}
