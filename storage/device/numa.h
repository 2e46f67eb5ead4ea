// NUMA placement in the device model (papers/zen-plus-journal.txt section 4.2.2, Figures 27-31):
// which node each worker thread runs on and which node owns an address, so that an access to
// another node's DRAM or NVM is counted as remote and charged the profile's remote factor.
// Nodes are virtual (this model alone) or real (the same numbering, and libnuma also places the
// threads and memory: system/numa_host.h).
//
// Placements (--numa-policy):
//  - stripe (default, what --numa-nodes k always did): the image in k contiguous stripes,
//    threads round robin; DRAM is not placed (every DRAM access local).
//  - local: threads and all memory on node 0 (Figure 27's upper bound).
//  - remote: threads on node 0, all DRAM and NVM on node 1 (the lower bound).
//  - naive: shared pools of interleaved pages (4 KB, as the kernel's interleave policy) on
//    every node; threads split over the nodes.
//  - local-write: per-node DRAM and NVM pools (NVM: alternate 2 MB extents); an engine with node-local pools (Zen) takes its
//    Met-Cache regions and NVM pages from the writer's node; other DRAM is the thread's own.
//  - soft-partition: local-write, and transactions go to the node of the partitions they
//    access (system/dispatcher.h, system/soft_partition.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nvt::dev {

enum class Placement : uint8_t { Stripe, Local, Remote, Naive, LocalWrite, SoftPartition };

// Accepts the names and the specs' older ones (`shared` = naive, `aware` = local-write,
// zen-vldb21's "Zen-NUMA-aware"). Throws std::invalid_argument naming the accepted values.
Placement parse_placement(const std::string& name);
const char* placement_name(Placement p);
std::vector<std::string> placement_names();
inline bool per_node_pools(Placement p) { return p == Placement::LocalWrite || p == Placement::SoftPartition; }
// A placement that means something only with two nodes or more.
inline bool needs_two_nodes(Placement p) { return p != Placement::Stripe && p != Placement::Local; }

constexpr uint64_t kInterleaveBytes = 4096;
// Per-node NVM pools are made of 2 MB extents of the image (extent e on node e mod k): every
// engine region, Zen's page heap (2 MB pages, 2 MB aligned) included, has pages on each node
// wherever it lies in the image.
constexpr uint64_t kNodeExtentBytes = 2ull << 20;
constexpr int kMaxNumaThreads = 1024;

// Thread-to-node binding of the placements that split threads over nodes (Figure 30): `even`
// puts thread t on node t mod k (T/k per node); `group` fills node 0 with `per_node` threads
// before node 1, and so on. local and remote put every thread on node 0.
std::vector<int> bind_threads(Placement p, int nodes, int threads, const std::string& binding, int per_node);

// The run's layout; set before the engine is built (its pools ask for their threads' nodes).
void set_numa_layout(Placement p, int nodes, const std::vector<int>& thread_node);
int node_of_thread(int t);  // the layout's node of worker t (0 when none was set)

// Real nodes (libnuma): real[node] is the host's node id behind model node `node`, -1 for a
// virtual one. With real nodes, pools and the image are also moved to their node's memory.
void set_real_nodes(const std::vector<int>& real);
int real_node(int node);  // -1: virtual (or none set)
// Moves [p, p + len) to model node `node`'s real memory (mbind, MPOL_MF_MOVE); a virtual node
// leaves it where it is. Throws std::runtime_error naming the node when the kernel refuses.
void place_on_node(void* p, uint64_t len, int node);
// The NVM image's pages on the real nodes the placement names: node spans (stripe, per-node
// pools), node 0 or 1 (local, remote), interleaved (naive). Nothing for virtual nodes.
void place_image(char* base, uint64_t size);

// DRAM owned by nodes: `regions` consecutive slices of `region_bytes` from `base`, slice r on
// worker r's node (Zen's Met-Cache regions). Only consulted under per-node placements; memory
// that is not in a pool is the accessing thread's own (private buffers, first touch).
void add_dram_pool(const void* base, uint64_t region_bytes, int regions);
void remove_dram_pool(const void* base);
int dram_pool_node(const void* p, int otherwise);

}  // namespace nvt::dev
