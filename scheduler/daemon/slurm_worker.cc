// SlurmWorker: the worker thread's life.
#include "scheduler/daemon/slurm_worker.h"

namespace elastic::daemon {

SlurmWorker::SlurmWorker(boost::asio::io_context& loop)
    : loop_(loop), work_(worker_io_.get_executor()), thread_([this] { worker_io_.run(); }) {}

SlurmWorker::~SlurmWorker() {
  work_.reset();
  worker_io_.stop();
  thread_.join();
}

}  // namespace elastic::daemon
