// points.csv: the profiled points of points.json as one CSV row each, for spreadsheets and
// plots (points.json stays the fitter's input). Pure.
#pragma once

#include <string>

#include "perf/rubick/perf_json.h"

namespace elastic::agent {

// A header row, then one row per run; doubles with 17 significant digits (exact).
std::string ProfiledPointsToCsv(const perf::ProfiledPoints& points);

}  // namespace elastic::agent
