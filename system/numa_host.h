// The run's NUMA nodes: real ones (libnuma) where the host has as many as asked, else virtual
// ones in the device model alone; which worker runs on which node (storage/device/numa.h).
// Every output names each node real or virtual.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/device/numa.h"
#include "system/options.h"

namespace nvt::dev {
class NvmImage;
}

namespace nvt {

struct NumaPlan {
  dev::Placement placement = dev::Placement::Stripe;
  int nodes = 1;
  std::vector<int> real;         // per node: the host's node id, or -1 (virtual)
  std::vector<int> thread_node;  // per worker
  bool virtual_nodes() const { return !real.empty() && real[0] < 0; }
  nlohmann::json to_json() const;
};

// The host's NUMA nodes with memory, as libnuma numbers them ({0} without NUMA support).
std::vector<int> host_numa_nodes();

// Resolves --numa-nodes, --numa-policy, --numa-real-nodes and --numa-binding against the host's
// nodes. Throws std::invalid_argument naming what is wrong: a real node the host lacks, a
// policy that needs two nodes on a one-node host without --numa-nodes, a list of another length.
NumaPlan plan_numa(const Options& o, const std::vector<int>& host_nodes);

// The NVM image's files from --nvm-path: one file, a comma-separated list of one file per
// node, or a pattern whose `{node}` becomes each node's host id (real nodes) or model number
// (virtual ones), e.g. /mnt/pmem{node}/db.img. Throws std::invalid_argument naming what is
// wrong: a list of another length than the nodes, an empty or repeated name.
std::vector<std::string> node_image_paths(const std::string& nvm_path, const NumaPlan& p);

// Installs the plan in the device model (placement, thread nodes, real nodes) and places the
// image's pages on the real nodes; not those of per-node files on persistent memory, whose
// pages lie on their file's device.
void apply_numa(const NumaPlan& p, const dev::NvmImage& nvm);

}  // namespace nvt
