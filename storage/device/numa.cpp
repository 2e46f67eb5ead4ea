#include "storage/device/numa.h"

#include <numa.h>
#include <numaif.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "storage/device/device.h"

namespace nvt::dev {

namespace {
const char* const kNames[] = {"stripe", "local", "remote", "naive", "local-write", "soft-partition"};

struct Pool {
  uintptr_t lo = 0, hi = 0;
  uint64_t region_bytes = 0;
};
constexpr int kMaxPools = 64;
Pool g_pools[kMaxPools];  // written before workers start, read by them without a lock
int g_npools = 0;
std::mutex g_pools_mu;
int16_t g_thread_node[kMaxNumaThreads] = {};
std::vector<int> g_real;  // model node -> real node id, -1 virtual

void bind_real(void* p, uint64_t len, const std::vector<int>& reals, int mode) {
  constexpr uint64_t kPage = 4096;
  auto a = reinterpret_cast<uintptr_t>(p);
  uintptr_t lo = (a + kPage - 1) / kPage * kPage, hi = (a + len) / kPage * kPage;
  if (hi <= lo) return;
  unsigned long mask[16] = {};
  for (int r : reals) mask[r / 64] |= 1ul << (r % 64);
  if (mbind(reinterpret_cast<void*>(lo), hi - lo, mode, mask, 1024, MPOL_MF_MOVE) != 0)
    throw std::runtime_error(std::string("cannot place memory on NUMA node ") + std::to_string(reals[0]) +
                             ": mbind: " + strerror(errno));
}
}  // namespace

Placement parse_placement(const std::string& name) {
  for (int i = 0; i < 6; i++)
    if (name == kNames[i]) return Placement(i);
  if (name == "shared") return Placement::Naive;
  if (name == "aware") return Placement::LocalWrite;
  throw std::invalid_argument("unknown NUMA policy '" + name +
                              "' (accepted: stripe, local, remote, naive, local-write, soft-partition)");
}

const char* placement_name(Placement p) { return kNames[int(p)]; }
std::vector<std::string> placement_names() { return {kNames, kNames + 6}; }

std::vector<int> bind_threads(Placement p, int nodes, int threads, const std::string& binding, int per_node) {
  std::vector<int> r(size_t(threads), 0);
  if (p == Placement::Local || p == Placement::Remote || nodes < 2) return r;
  for (int t = 0; t < threads; t++)
    r[size_t(t)] = binding == "group" ? std::min(nodes - 1, t / std::max(1, per_node)) : t % nodes;
  return r;
}

void set_numa_layout(Placement p, int nodes, const std::vector<int>& thread_node) {
  g_model.placement = p;
  g_model.nodes = nodes;
  for (int t = 0; t < kMaxNumaThreads; t++)  // threads beyond the list: round robin, as stripe
    g_thread_node[t] = int16_t(size_t(t) < thread_node.size() ? thread_node[size_t(t)] : t % std::max(1, nodes));
  g_real.clear();
}

void set_real_nodes(const std::vector<int>& real) { g_real = real; }
int real_node(int node) { return node >= 0 && size_t(node) < g_real.size() ? g_real[size_t(node)] : -1; }

void place_on_node(void* p, uint64_t len, int node) {
  int r = real_node(node);
  if (r >= 0) bind_real(p, len, {r}, MPOL_BIND);
}

void place_image(char* base, uint64_t size) {
  if (g_model.nodes < 2 || real_node(0) < 0) return;
  switch (g_model.placement) {
    case Placement::Local: return place_on_node(base, size, 0);
    case Placement::Remote: return place_on_node(base, size, 1);
    case Placement::Naive: return bind_real(base, size, g_real, MPOL_INTERLEAVE);
    case Placement::LocalWrite:
    case Placement::SoftPartition:
      for (uint64_t lo = 0; lo < size; lo += kNodeExtentBytes)
        place_on_node(base + lo, std::min(kNodeExtentBytes, size - lo), int(lo / kNodeExtentBytes % uint64_t(g_model.nodes)));
      return;
    default:
      for (int n = 0; n < g_model.nodes; n++) {
        uint64_t lo = uint64_t(n) * g_model.node_span;
        if (lo < size) place_on_node(base + lo, std::min(g_model.node_span, size - lo), n);
      }
  }
}

int node_of_thread(int t) { return t >= 0 && t < kMaxNumaThreads ? g_thread_node[t] : 0; }

void add_dram_pool(const void* base, uint64_t region_bytes, int regions) {
  std::lock_guard g(g_pools_mu);
  auto lo = reinterpret_cast<uintptr_t>(base);
  Pool np{lo, lo + region_bytes * uint64_t(regions), region_bytes};
  int i = 0;
  while (i < g_npools && g_pools[i].lo != 0) i++;
  if (i == kMaxPools) return;  // not placed: counted as the thread's own DRAM
  g_pools[i] = np;
  g_npools = std::max(g_npools, i + 1);
  if (g_model.nodes < 2 || real_node(0) < 0) return;
  // Real nodes: the pool's pages where the placement puts them.
  char* p = reinterpret_cast<char*>(lo);
  uint64_t len = np.hi - np.lo;
  switch (g_model.placement) {
    case Placement::Local: return place_on_node(p, len, 0);
    case Placement::Remote: return place_on_node(p, len, 1);
    case Placement::Naive: return bind_real(p, len, g_real, MPOL_INTERLEAVE);
    case Placement::LocalWrite:
    case Placement::SoftPartition:
      for (int r = 0; r < regions; r++) place_on_node(p + uint64_t(r) * region_bytes, region_bytes, node_of_thread(r));
      return;
    default: return;
  }
}

void remove_dram_pool(const void* base) {
  std::lock_guard g(g_pools_mu);
  for (int i = 0; i < g_npools; i++)
    if (g_pools[i].lo == reinterpret_cast<uintptr_t>(base)) g_pools[i] = Pool{};
}

int dram_pool_node(const void* p, int otherwise) {
  auto a = reinterpret_cast<uintptr_t>(p);
  for (int i = 0; i < g_npools; i++) {
    const Pool& q = g_pools[i];
    if (a >= q.lo && a < q.hi) return node_of_thread(int((a - q.lo) / q.region_bytes));
  }
  return otherwise;
}

}  // namespace nvt::dev
