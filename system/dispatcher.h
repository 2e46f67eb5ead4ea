// Algorithm 3 of papers/zen-plus-journal.txt (transaction assignment), for the soft partition
// placement: each transaction goes to a NUMA node by load balance or, while loads are within
// delta of each other, by its affinity (a vote of the partitions its requests name, looked up
// in part_map), then to a thread of that node in round robin; every request's partition is
// counted for that thread (Algorithm 4's input, system/soft_partition.h).
//
// The dispatcher is cooperative, not a thread of its own (a 2-core host has no core to spare):
// a worker whose queue is empty draws the next transaction from its own generator and assigns
// it; one assigned to another worker waits in that worker's queue (kQueue deep), and the drawer
// draws again until one is its own. A node's load is the share of its workers' queue slots in
// use (the paper reads CPU utilization from /proc/stat; every worker here is always busy, so
// the work waiting for a node is what differs); a transaction whose thread's queue is full runs
// on the drawer. The paper's d = 0.3 applies to that share.
#pragma once
#include <deque>
#include <limits>
#include <mutex>
#include <vector>

#include "system/soft_partition.h"

namespace nvt {

// getAffinityNode and lines 5-8 of assignTransaction on given node loads: the node that runs a
// transaction whose requests fall into `parts`. `affinity` is set to the vote's winner (-1: no
// partition known, a "complex" transaction, placed on a random node). A node with no workers
// (group binding with few threads) has infinite load. Ties of the vote go to `prefer` when it
// is among the winners (the drawing worker's node: no hand-off), else to the lowest node.
inline int choose_node(const SoftPartition& sp, const std::vector<double>& load, double delta,
                       const std::vector<uint64_t>& parts, int prefer, uint64_t& rand_state, int& affinity) {
  const int N = sp.nodes();
  std::vector<uint32_t> vote(size_t(N), 0);
  for (uint64_t p : parts) vote[size_t(sp.node_of(p))]++;
  uint32_t best = 0;
  for (uint32_t v : vote) best = std::max(best, v);
  if (best == 0) {
    rand_state = rand_state * 6364136223846793005ull + 1442695040888963407ull;
    affinity = -1;
    int n = int((rand_state >> 33) % uint64_t(N));
    if (load[size_t(n)] != std::numeric_limits<double>::infinity()) return n;
  } else {
    affinity = prefer >= 0 && vote[size_t(prefer)] == best ? prefer : 0;
    while (vote[size_t(affinity)] != best) affinity++;
  }
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  int argmin = 0;
  for (int n = 0; n < N; n++) {
    if (load[size_t(n)] == std::numeric_limits<double>::infinity()) continue;
    if (load[size_t(n)] < lo) lo = load[size_t(n)], argmin = n;
    hi = std::max(hi, load[size_t(n)]);
  }
  if (hi - lo > delta) return argmin;  // load very unbalanced
  if (affinity < 0 || load[size_t(affinity)] == std::numeric_limits<double>::infinity()) return argmin;
  return affinity;
}

template <class Txn>
class Dispatcher {
 public:
  static constexpr size_t kQueue = 4;

  Dispatcher(SoftPartition& sp, double delta, uint64_t seed)
      : sp_(sp), delta_(delta), rand_(seed * 2654435761ull + 1), queues_(size_t(sp.threads())),
        node_threads_(size_t(sp.nodes())), rr_(size_t(sp.nodes()), 0) {
    for (int t = 0; t < sp.threads(); t++) node_threads_[size_t(sp.node_of_thread(t))].push_back(t);
  }

  // Worker t's next transaction: one queued for it, else drawn with `draw()` and assigned by
  // Algorithm 3 until one is its own. `parts_of(txn, keys)` appends the partition keys of the
  // transaction's requests. `affinity` is set to the transaction's affinity node (-1: none).
  template <class Draw, class PartsOf>
  Txn next(int t, Draw&& draw, PartsOf&& parts_of, int& affinity) {
    std::lock_guard g(mu_);
    for (;;) {
      auto& mine = queues_[size_t(t)];
      if (!mine.empty()) {
        Queued q = std::move(mine.front());
        mine.pop_front();
        affinity = q.affinity;
        return std::move(q.txn);
      }
      Txn x = draw();
      keys_.clear();
      parts_of(x, keys_);
      for (auto& k : keys_) k = sp_.partition_of(k);
      int aff = -1;
      int u = assign_locked(keys_, sp_.node_of_thread(t), aff);
      if (u == t || queues_[size_t(u)].size() >= kQueue) {
        overflow_ += u != t;
        affinity = aff;
        return x;
      }
      queues_[size_t(u)].push_back({std::move(x), aff});
    }
  }

  // Algorithm 3 for a transaction of the given partitions (tests; next() calls it).
  int assign(const std::vector<uint64_t>& parts, int prefer_node, int& affinity) {
    std::lock_guard g(mu_);
    return assign_locked(parts, prefer_node, affinity);
  }
  // Transactions waiting for worker t (tests fill queues to make a node loaded).
  void enqueue(int t, Txn x) {
    std::lock_guard g(mu_);
    queues_[size_t(t)].push_back({std::move(x), -1});
  }
  // Transactions that ran on their drawer because their worker's queue was full.
  uint64_t overflow() const { return overflow_; }

 private:
  struct Queued {
    Txn txn;
    int affinity;
  };

  int assign_locked(const std::vector<uint64_t>& parts, int prefer_node, int& affinity) {
    const int N = sp_.nodes();
    std::vector<double> load(size_t(N), std::numeric_limits<double>::infinity());
    for (int n = 0; n < N; n++) {
      auto& ts = node_threads_[size_t(n)];
      if (ts.empty()) continue;
      size_t q = 0;
      for (int t : ts) q += queues_[size_t(t)].size();
      load[size_t(n)] = double(q) / double(kQueue * ts.size());
    }
    int node = choose_node(sp_, load, delta_, parts, prefer_node, rand_, affinity);
    auto& ts = node_threads_[size_t(node)];
    int thd = ts[rr_[size_t(node)]++ % ts.size()];  // getNextThread: round robin in the node
    for (uint64_t p : parts) sp_.count(thd, p);      // access_count[thd_id][part_id]++
    return thd;
  }

  SoftPartition& sp_;
  double delta_;
  uint64_t rand_;
  std::mutex mu_;
  std::vector<std::deque<Queued>> queues_;
  std::vector<std::vector<int>> node_threads_;
  std::vector<size_t> rr_;
  std::vector<uint64_t> keys_;
  uint64_t overflow_ = 0;
};

}  // namespace nvt
