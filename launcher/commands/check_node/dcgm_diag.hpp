// `dcgmi diag -r 1 -j` as an option (--dcgm-diag), as slurm-gcp's gpu-test epilog runs it: DCGM's
// quick diagnostic (deployment and integration checks, about a minute). Judged from its JSON
// ("DCGM Diagnostic" > test_categories > tests > results, each with a status) and exit code, not by
// grepping "fail" in its text (which drained healthy nodes in the toolkit's epilog).
#pragma once

#include "check_node/finding.hpp"

#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

// Findings from dcgmi's exit code and JSON output: one per failing test (Deployment tests are the
// node's setup: configuration; the others GPU hardware); a non-zero exit without a failing test in
// the JSON is one finding naming the exit code. 127: dcgmi is not installed (a warning).
std::vector<Finding> judge_dcgm_diag(int exit_code, const std::string& output);

// Runs PROGRAM diag -r 1 -j (bounded: 600 s) and judges it.
std::vector<Finding> run_dcgm_diag(const std::string& program);

}  // namespace gpudirect::launcher::check_node
