// NUMA-aware soft partition (papers/zen-plus-journal.txt section 4.2.2): every table is divided
// into logical partitions by its partition key (the primary key, or a foreign key shared by
// related tables: TPC-C's warehouse id), the global part_map assigns each partition to a NUMA
// node, and per-thread access counts let Algorithm 4 remap partitions periodically. Nothing is
// moved physically: a partition's tuples migrate by NUMA-local writes of the transactions that
// Algorithm 3 (system/dispatcher.h) sends to its node.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace nvt {

class SoftPartition {
 public:
  // `thread_node[t]`: worker t's node (getNodeForThread); partitions start spread evenly
  // (partition p on node p mod nodes).
  SoftPartition(uint64_t parts, int nodes, std::vector<int> thread_node, double eta)
      : parts_(parts), nodes_(nodes), eta_(eta), thread_node_(std::move(thread_node)),
        map_(std::make_unique<std::atomic<uint16_t>[]>(parts)),
        count_(std::make_unique<std::atomic<uint32_t>[]>(parts * thread_node_.size())) {
    if (parts == 0) throw std::invalid_argument("soft partition: --numa-partitions must be at least 1");
    if (nodes < 1 || nodes > 65535) throw std::invalid_argument("soft partition: nodes out of range");
    for (uint64_t p = 0; p < parts; p++) map_[p].store(uint16_t(p % uint64_t(nodes)), std::memory_order_relaxed);
    for (uint64_t i = 0; i < parts * thread_node_.size(); i++) count_[i].store(0, std::memory_order_relaxed);
  }

  uint64_t parts() const { return parts_; }
  int nodes() const { return nodes_; }
  int threads() const { return int(thread_node_.size()); }
  int node_of_thread(int t) const { return thread_node_[size_t(t)]; }
  // The partition rule hash(key) % parts; partition keys are dense integers (YCSB draws its
  // keys from scrambled Zipfian ranks, TPC-C's warehouse ids count from 1), so the hash is the
  // key itself and consecutive warehouses alternate between nodes.
  uint64_t partition_of(uint64_t key) const { return key % parts_; }
  int node_of(uint64_t part) const { return map_[part].load(std::memory_order_relaxed); }
  void set_node(uint64_t part, int node) { map_[part].store(uint16_t(node), std::memory_order_relaxed); }

  // access_count[thread][part] += n (Algorithm 3 line 10).
  void count(int thread, uint64_t part, uint32_t n = 1) {
    count_[size_t(thread) * parts_ + part].fetch_add(n, std::memory_order_relaxed);
  }
  uint32_t access_count(int thread, uint64_t part) const {
    return count_[size_t(thread) * parts_ + part].load(std::memory_order_relaxed);
  }

  // Algorithm 4 (mapPartitions) over the counts since the last call, which it then clears (each
  // interval maps by the recent accesses). Returns the partitions remapped. Two readings of the
  // pseudocode, after the text: the candidate is the eligible node that accessed the partition
  // most ("sees the largest number of accesses"; line 18 compares the other way round), and a
  // node is eligible while its load is at most 1.1 x the minimum (line 17's strict "<" admits
  // no node while every load is 0, at the first partition).
  uint64_t remap() {
    const size_t P = parts_, N = size_t(nodes_);
    std::vector<uint64_t> pt_cnt(P, 0), nd_pt(N * P, 0);
    for (size_t t = 0; t < thread_node_.size(); t++) {
      size_t node = size_t(thread_node_[t]);
      for (size_t p = 0; p < P; p++) {
        uint64_t c = count_[t * P + p].exchange(0, std::memory_order_relaxed);
        pt_cnt[p] += c;
        nd_pt[node * P + p] += c;
      }
    }
    std::vector<uint64_t> order(P);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return pt_cnt[a] > pt_cnt[b]; });
    std::vector<uint64_t> mapped_pt(N, 0), mapped_cnt(N, 0);
    const uint64_t cap = (P + N - 1) / N;  // ceil(part_num / node_num)
    uint64_t moved = 0;
    for (uint64_t part : order) {
      uint64_t min_load = *std::min_element(mapped_cnt.begin(), mapped_cnt.end());
      int node = -1;
      for (size_t nd = 0; nd < N; nd++)
        if (double(mapped_cnt[nd]) <= 1.1 * double(min_load) && mapped_pt[nd] < cap)
          if (node < 0 || nd_pt[nd * P + part] > nd_pt[size_t(node) * P + part]) node = int(nd);
      int orig = node_of(part);
      if (node >= 0 && node != orig && double(nd_pt[size_t(node) * P + part]) > double(nd_pt[size_t(orig) * P + part]) * eta_) {
        set_node(part, node);  // remap the partition
        moved++;
      } else {
        node = orig;  // mapping unchanged
      }
      mapped_pt[size_t(node)]++;
      mapped_cnt[size_t(node)] += nd_pt[size_t(node) * P + part];
    }
    remapped_.fetch_add(moved, std::memory_order_relaxed);
    return moved;
  }
  uint64_t remapped() const { return remapped_.load(std::memory_order_relaxed); }

 private:
  uint64_t parts_;
  int nodes_;
  double eta_;
  std::vector<int> thread_node_;
  std::unique_ptr<std::atomic<uint16_t>[]> map_;     // part_map
  std::unique_ptr<std::atomic<uint32_t>[]> count_;   // access_count[thread][part]
  std::atomic<uint64_t> remapped_{0};
};

}  // namespace nvt
