// SlurmWorker: elasticd's Slurm RPCs on a thread of their own, results handed back to the event
// loop. A slow or hung slurmctld blocks each libslurm call until MessageTimeout (10 s by default,
// 20 s with its retry); made on the event loop, one such call stalled every client of the socket,
// `status` included (bench/elasticd_load.sh --slurmctld-stopped: 1 reply in 60 s to 200 clients,
// the rest timed out). Calls run one at a time, in order: libslurm is used from this thread only
// (slurm_client.h). Thread-safety: construct, Submit and pending() on the event loop's thread;
// `call` runs on the worker, `done` on the event loop.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstddef>
#include <thread>
#include <utility>

namespace elastic::daemon {

class SlurmWorker {
 public:
  explicit SlurmWorker(boost::asio::io_context& loop);
  // Drops the calls not yet started and waits for the one in progress (Slurm's timeouts bound
  // it). REQUIRES: destroyed before `loop`, which may still hold undelivered results.
  ~SlurmWorker();
  SlurmWorker(const SlurmWorker&) = delete;
  SlurmWorker& operator=(const SlurmWorker&) = delete;

  // Runs `call()` on the worker thread, then `done(result)` on the event loop.
  // REQUIRES: `call` does not throw (report errors in its result).
  template <typename Call, typename Done>
  void Submit(Call call, Done done) {
    ++pending_;
    boost::asio::post(worker_io_, [this, call = std::move(call), done = std::move(done)]() mutable {
      auto result = call();
      boost::asio::post(loop_,
                        [this, result = std::move(result), done = std::move(done)]() mutable {
                          --pending_;
                          done(std::move(result));
                        });
    });
  }

  // Calls submitted whose `done` has not run yet: callers bound the queue with it.
  std::size_t pending() const { return pending_; }

 private:
  boost::asio::io_context& loop_;
  boost::asio::io_context worker_io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::size_t pending_ = 0;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace elastic::daemon
