// What `gpudirect-launch health --metrics-file` writes for node_exporter's textfile collector:
// per node its best pair busbw and its verdict, the threshold and the time of the sweep
// (gpudirect_health_*, documented in docs/commands/health.md).
#pragma once

#include "health/sweep_report.hpp"
#include "reporting/prometheus_textfile.hpp"

namespace gpudirect::launcher::health {

metrics::PrometheusTextfile health_metrics(const SweepResult& result);

}  // namespace gpudirect::launcher::health
