// Checkpoint write throughput against `dd conv=fsync` on the same filesystem, side by side in
// one run (no pass/fail): CheckpointWriter::Commit (records with CRC framing, temp file, fsync,
// rename, directory fsync) of one payload of S MiB vs dd writing S MiB with a final fsync,
// alternated R times; prints both medians in MiB/s and the median of the per-round ratios.
//
// Usage: checkpoint_bench [--dir DIR] [--mib S] [--rounds R]   (defaults: /tmp, 64, 7)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/checkpoint/checkpoint_dir.h"
#include "agent/checkpoint/checkpoint_writer.h"
#include "agent/checkpoint/fingerprint.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using elastic::agent::CheckpointWriter;
using elastic::agent::Fingerprint;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Random bytes: a compressing filesystem must not make either side look faster.
std::string Payload(std::size_t bytes) {
  std::mt19937_64 random(1);
  std::string payload(bytes, '\0');
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    const std::uint64_t word = random();
    std::memcpy(payload.data() + i, &word, 8);
  }
  return payload;
}

double CheckpointSeconds(const fs::path& dir, const std::string& payload, std::uint64_t step) {
  Fingerprint fingerprint;
  fingerprint.Add("bench", "checkpoint_bench");
  const Clock::time_point start = Clock::now();
  CheckpointWriter writer(fingerprint);
  // Borrowed, as a large serialized model would be: the writer streams it to the file with no
  // copy of its own.
  writer.AddView("params", payload);
  const fs::path path = writer.Commit(dir, step);
  const double seconds = Seconds(start);
  fs::remove(path);
  return seconds;
}

double DdSeconds(const fs::path& dir, const fs::path& source, int mib) {
  const fs::path target = dir / "dd.out";
  const std::string command = "dd if='" + source.string() + "' of='" + target.string() +
                              "' bs=1M count=" + std::to_string(mib) + " conv=fsync status=none";
  const Clock::time_point start = Clock::now();
  if (std::system(command.c_str()) != 0) throw std::runtime_error("dd failed: " + command);
  const double seconds = Seconds(start);
  fs::remove(target);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path base = "/tmp";
  int mib = 64;
  int rounds = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dir")
      base = argv[i + 1];
    else if (flag == "--mib")
      mib = std::atoi(argv[i + 1]);
    else if (flag == "--rounds")
      rounds = std::atoi(argv[i + 1]);
    else {
      std::cerr << "usage: checkpoint_bench [--dir DIR] [--mib S] [--rounds R]\n";
      return 2;
    }
  }
  try {
    const fs::path dir = base / ("checkpoint-bench-" + std::to_string(getpid()));
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::owner_all);
    const std::string payload = Payload(static_cast<std::size_t>(mib) << 20);
    // dd reads the same random bytes from a file in the page cache, so both sides only write.
    const fs::path source = dir / "source.bin";
    {
      FILE* file = std::fopen(source.c_str(), "wb");
      std::fwrite(payload.data(), 1, payload.size(), file);
      std::fclose(file);
    }
    std::vector<double> ckpt, dd, ratio;
    for (int round = 0; round < rounds; ++round) {
      const double c = CheckpointSeconds(dir, payload, static_cast<std::uint64_t>(round + 1));
      const double d = DdSeconds(dir, source, mib);
      ckpt.push_back(mib / c);
      dd.push_back(mib / d);
      ratio.push_back(d / c);  // checkpoint throughput / dd throughput
    }
    fs::remove_all(dir);
    std::printf(
        "(c) checkpoint write of %d MiB on %s, %d rounds: checkpoint=%.1f MiB/s "
        "dd_conv_fsync=%.1f MiB/s ratio(checkpoint/dd)=%.3f\n",
        mib, base.c_str(), rounds, Median(ckpt), Median(dd), Median(ratio));
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "checkpoint_bench: " << e.what() << std::endl;
    return 1;
  }
}
