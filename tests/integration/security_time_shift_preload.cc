// LD_PRELOAD shim for the rewound-credential test: the wall clock of the process it is loaded
// into runs ELASTIC_TIME_SHIFT_S seconds ahead (time, gettimeofday, CLOCK_REALTIME), so a munged
// started with it seals credentials "in the future". Test-only; never installed.
#include <dlfcn.h>
#include <sys/time.h>
#include <time.h>

#include <cstdlib>

namespace {

long Shift() {
  static const long shift = [] {
    const char* text = std::getenv("ELASTIC_TIME_SHIFT_S");
    return text != nullptr ? std::atol(text) : 0L;
  }();
  return shift;
}

template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int clock_gettime(clockid_t clock, struct timespec* ts) {
  static auto next = Next<int (*)(clockid_t, struct timespec*)>("clock_gettime");
  const int rc = next(clock, ts);
  if (rc == 0 && ts != nullptr && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
    ts->tv_sec += Shift();
  }
  return rc;
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval* tv, void* tz) {
  static auto next = Next<int (*)(struct timeval*, void*)>("gettimeofday");
  const int rc = next(tv, tz);
  if (rc == 0 && tv != nullptr) tv->tv_sec += Shift();
  return rc;
}

__attribute__((visibility("default"))) time_t time(time_t* out) {
  struct timespec ts {};
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out != nullptr) *out = ts.tv_sec;
  return ts.tv_sec;
}

}  // extern "C"
