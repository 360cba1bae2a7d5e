// SlurmWorker: a call that blocks (a hung slurmctld) must not block the event loop; results come
// back on the loop's thread, in order; destruction drops what has not started.
#include "scheduler/daemon/slurm_worker.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace elastic::daemon {
namespace {

using namespace std::chrono_literals;

TEST(SlurmWorkerTest, BlockedCallLeavesTheLoopFree) {
  boost::asio::io_context loop;
  auto busy = boost::asio::make_work_guard(loop);  // like the daemon's socket: always work to do
  SlurmWorker worker(loop);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> results;
  std::thread::id done_thread;
  worker.Submit([released] { released.wait(); return 1; },
                [&](int r) { results.push_back(r); done_thread = std::this_thread::get_id(); });
  worker.Submit([] { return 2; }, [&](int r) { results.push_back(r); });
  EXPECT_EQ(worker.pending(), 2u);

  // While the first call blocks, the loop still runs its other work (a socket's requests).
  bool loop_ran = false;
  boost::asio::post(loop, [&] { loop_ran = true; });
  loop.run_for(200ms);
  EXPECT_TRUE(loop_ran);
  EXPECT_TRUE(results.empty());

  release.set_value();
  for (int i = 0; i < 100 && results.size() < 2; ++i) loop.run_for(20ms);
  EXPECT_EQ(results, (std::vector<int>{1, 2}));  // one at a time, in order
  EXPECT_EQ(done_thread, std::this_thread::get_id());
  EXPECT_EQ(worker.pending(), 0u);
}

TEST(SlurmWorkerTest, DestructionWaitsForTheCallInProgressOnly) {
  boost::asio::io_context loop;
  std::promise<void> started;
  bool second_ran = false;
  {
    SlurmWorker worker(loop);
    worker.Submit([&] { started.set_value(); std::this_thread::sleep_for(100ms); return 0; },
                  [](int) {});
    worker.Submit([&] { second_ran = true; return 0; }, [](int) {});
    started.get_future().wait();
  }
  EXPECT_FALSE(second_ran);
}

}  // namespace
}  // namespace elastic::daemon
