// RunParts: a fork-join over c host threads.
#include "agent/plan/host_threads.h"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace elastic::agent {

// Threads are started per call: an update is one join per step, and a thread start (tens of
// microseconds) is small next to a step, so a persistent pool would buy nothing measurable here.
void RunParts(std::size_t parts, std::size_t threads,
              const std::function<void(std::size_t)>& work) {
  std::mutex mutex;
  std::exception_ptr failure;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads && t < parts; ++t) {
    pool.emplace_back([&, t] {
      for (std::size_t k = t; k < parts; k += threads) {
        try {
          work(k);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!failure) failure = std::current_exception();
        }
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace elastic::agent
