// What `check-node --metrics-file` writes for node_exporter's textfile collector: whether the node
// passed, its findings per check, the reason it drains with, the versions the fleet comparison
// reads, and when (gpudirect_node_check_*, documented in docs/monitoring.md).
#pragma once

#include "check_node/node_report.hpp"
#include "reporting/prometheus_textfile.hpp"

namespace gpudirect::launcher::check_node {

metrics::PrometheusTextfile node_check_metrics(const NodeReport& report, long long timestamp);

}  // namespace gpudirect::launcher::check_node
