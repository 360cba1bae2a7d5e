// How much longer the test suites wait for work under a slower build: a sanitizer build runs the
// agent, Slurm's preloaded daemons and Open MPI several times slower, so every "wait until" limit
// (and every ctest TIMEOUT, in ElasticHelpers.cmake) is multiplied by ELASTIC_TEST_TIME_SCALE,
// which CMake sets to 4 with ELASTIC_SANITIZE. Limits that assert something does NOT happen
// within a time are never scaled.
#pragma once

namespace elastic::testing {

// The build's factor (1 in a normal build).
int TestTimeScale();

// A wait limit of `seconds` in a normal build, scaled for this one.
int ScaledSeconds(int seconds);

}  // namespace elastic::testing
