// The build's test time scale (time_scale.h); only this file sees the compile definition, so
// changing it rebuilds one file, not every suite.
#include "tests/common/time_scale.h"

#ifndef ELASTIC_TEST_TIME_SCALE
#define ELASTIC_TEST_TIME_SCALE 1
#endif

namespace elastic::testing {

int TestTimeScale() { return ELASTIC_TEST_TIME_SCALE; }

int ScaledSeconds(int seconds) { return seconds * TestTimeScale(); }

}  // namespace elastic::testing
