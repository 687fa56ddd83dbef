// The drain reason slurm-gcp's repair acts on. Since 2026-01 slurm-gcp (scripts/repair.py) reports
// a node drained with a reason of exactly PERFORMANCE, SDC, XID or unspecified to Compute Engine as
// a faulty host; any other text is only a drained node. So the reason is one of those words, chosen
// by the kind of fault (configurable: --reason FAULT=TEXT), and our detail goes to the node's comment.
#pragma once

#include "check_node/finding.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

using ReasonMap = std::map<Fault, std::string>;

// gpu_hardware -> XID, performance -> PERFORMANCE, configuration -> unspecified.
ReasonMap default_reasons();

// Applies "FAULT=TEXT" (FAULT: gpu_hardware, performance, configuration). Throws
// std::invalid_argument naming what is accepted.
void set_reason(ReasonMap& reasons, const std::string& assignment);

// The reason for a node with these findings: the failing finding of the gravest kind decides
// (a GPU fault first, the host needs repair; then performance; then configuration). "" when
// nothing fails.
std::string drain_reason(const std::vector<Finding>& findings, const ReasonMap& reasons);

// "gpudirect check-node: GPU 3: uncorrected volatile ECC errors 2, expected 0; ... (+2 more)", the
// failing findings, bounded for Slurm's comment field.
std::string drain_comment(const std::vector<Finding>& findings);

}  // namespace gpudirect::launcher::check_node
