// Slurm's block topology (topology/block, Slurm 23.11+; the partition's Topology= on 25.05+): a
// block is a set of nodes joined by a faster fabric, on A4X the 18 VMs of one NVL72 NVLink domain
// (Cluster Toolkit's slurm-gcp writes 18-node blocks for a4x-highgpu-4g). The sweep reports pairs
// inside a block (NVLink through IMEX) apart from pairs across blocks (RoCE), since the two have
// different bandwidths and one threshold does not fit both.
//
// Read from `scontrol show topology` (one line per block: "BlockName=b1 BlockIndex=0
// Nodes=a4x-[0-17] BlockSize=18") or a topology.conf ("BlockName=b1 Nodes=a4x-[0-17]"); lines
// without BlockName= (switches, BlockSizes=, comments) are not blocks.
#pragma once

#include "health/sweep_run.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gpudirect::launcher::health {

struct Block {
  std::string name;
  std::vector<std::string> nodes;  // the hostlist expanded
};

// Throws std::invalid_argument naming the line for a block without Nodes= or a malformed hostlist.
std::vector<Block> parse_block_topology(std::string_view text);

enum class PairPath { in_block, across_blocks, unknown };  // unknown: a node in no block

PairPath pair_path(const std::vector<Block>& blocks, const std::string& a, const std::string& b);
const char* to_string(PairPath path);

// The report's section: the pair runs split into inside a block and across blocks, with each
// pair's block(s) and result; "" when there are no blocks.
std::string block_pairs_report(const std::vector<Block>& blocks, const std::vector<SweepRun>& runs);

}  // namespace gpudirect::launcher::health
