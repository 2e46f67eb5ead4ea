// NUMA placements (storage/device/numa.h), soft partition's Algorithms 3 and 4
// (system/dispatcher.h, system/soft_partition.h), the node plan (system/numa_host.h) and Zen's
// NUMA-local write (papers/zen-plus-journal.txt section 4.2.2).
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <stdexcept>
#include <string>
#include <vector>

#include "concurrency_control/cicada.h"
#include "storage/device/device.h"
#include "storage/device/nvm_image.h"
#include "system/dispatcher.h"
#include "system/numa_host.h"
#include "system/soft_partition.h"
#include "tests/unit/engine_util.h"
#include "tests/unit/test_util.h"
#include "tests/unit/zen_db.h"

using namespace nvt;
using nvt::test::TempPath;

namespace {

// Two nodes, four workers: 0 and 2 on node 0, 1 and 3 on node 1 (even binding).
SoftPartition four_workers(uint64_t parts = 8, double eta = 1.2) { return SoftPartition(parts, 2, {0, 1, 0, 1}, eta); }

}  // namespace

TEST(SoftPartition, PartitionsStartSpreadEvenlyAndZeroPartitionsIsRefused) {
  SoftPartition sp = four_workers();
  for (uint64_t p = 0; p < 8; p++) EXPECT_EQ(sp.node_of(p), int(p % 2));
  EXPECT_EQ(sp.partition_of(8 + 3), 3u);
  EXPECT_THROW(SoftPartition(0, 2, {0, 1}, 1.2), std::invalid_argument);
}

// Algorithm 4: partition 0 (node 0) is hot on node 1's workers: it moves there; the others,
// each accessed by its own node, stay; the counts start afresh.
TEST(SoftPartition, Algorithm4MovesAHotPartitionToTheNodeThatAccessesIt) {
  SoftPartition sp = four_workers();
  sp.count(1, 0, 60), sp.count(3, 0, 40), sp.count(0, 0, 5);
  for (uint64_t p = 1; p < 8; p++) sp.count(int(p % 2), p, 10);  // worker p%2 is on node p%2
  EXPECT_EQ(sp.remap(), 1u);
  EXPECT_EQ(sp.node_of(0), 1);
  for (uint64_t p = 1; p < 8; p++) EXPECT_EQ(sp.node_of(p), int(p % 2)) << "partition " << p;
  EXPECT_EQ(sp.remapped(), 1u);
  EXPECT_EQ(sp.access_count(1, 0), 0u) << "each interval maps by its own accesses";
  EXPECT_EQ(sp.remap(), 0u) << "no accesses since: nothing moves";
}

// eta: a candidate node must see more than eta x the owner's accesses.
TEST(SoftPartition, Algorithm4KeepsAPartitionWhoseCandidateIsWithinEta) {
  SoftPartition sp = four_workers();
  sp.count(1, 0, 11), sp.count(0, 0, 10);  // 11 < 10 x 1.2
  EXPECT_EQ(sp.remap(), 0u);
  EXPECT_EQ(sp.node_of(0), 0);
  sp.count(1, 0, 13), sp.count(0, 0, 10);  // 13 > 12
  EXPECT_EQ(sp.remap(), 1u);
  EXPECT_EQ(sp.node_of(0), 1);
}

// Algorithm 4 balances: a node already over 1.1 x the least loaded one takes no partition,
// however much it accessed it (the hottest partition went to node 1 first).
TEST(SoftPartition, Algorithm4SkipsANodeWhoseLoadIsAlreadyUnbalanced) {
  SoftPartition sp = four_workers(4);
  sp.count(1, 0, 100);            // partition 0 (node 0): node 1 only -> moves to node 1
  sp.count(1, 2, 50), sp.count(0, 2, 20);  // partition 2 (node 0): node 1 more, but node 1 is loaded
  EXPECT_EQ(sp.remap(), 1u);
  EXPECT_EQ(sp.node_of(0), 1);
  EXPECT_EQ(sp.node_of(2), 0);
}

// Algorithm 3: the vote of the requests' partitions picks the node; round robin in the node;
// the partitions are counted for the chosen worker.
TEST(Dispatcher, Algorithm3AssignsByAffinityVoteRoundRobinInTheNode) {
  SoftPartition sp = four_workers();
  Dispatcher<int> d(sp, 0.3, 1);
  int aff = -2;
  std::vector<uint64_t> parts = {0, 2, 4, 1};  // node 0: 3 votes, node 1: 1
  EXPECT_EQ(d.assign(parts, 1, aff), 0);
  EXPECT_EQ(aff, 0);
  EXPECT_EQ(d.assign(parts, 1, aff), 2) << "round robin over node 0's workers";
  EXPECT_EQ(d.assign(parts, 1, aff), 0);
  EXPECT_EQ(sp.access_count(0, 2), 2u);
  EXPECT_EQ(sp.access_count(2, 4), 1u);
  EXPECT_EQ(sp.access_count(1, 1), 0u);
  // A tie goes to the drawer's node.
  std::vector<uint64_t> tie = {0, 1};
  EXPECT_EQ(sp.node_of_thread(d.assign(tie, 1, aff)), 1);
  EXPECT_EQ(sp.node_of_thread(d.assign(tie, 0, aff)), 0);
  // No partition known (a complex transaction): a node at random, no affinity.
  d.assign({}, 0, aff);
  EXPECT_EQ(aff, -1);
}

// Load balance wins over affinity once node loads differ by more than delta.
TEST(Dispatcher, Algorithm3LoadBalanceWinsOverAffinityBeyondDelta) {
  SoftPartition sp = four_workers();
  Dispatcher<int> d(sp, 0.3, 1);
  std::vector<uint64_t> node0 = {0, 2, 4};
  int aff = -2;
  d.enqueue(0, 7);  // node 0: 1 of 8 slots in use, 0.125 <= delta
  EXPECT_EQ(sp.node_of_thread(d.assign(node0, 0, aff)), 0);
  for (int i = 0; i < 2; i++) d.enqueue(0, 7), d.enqueue(2, 7);  // node 0: 5/8 = 0.625 > 0.3
  EXPECT_EQ(sp.node_of_thread(d.assign(node0, 0, aff)), 1) << "the least loaded node, against the vote";
  EXPECT_EQ(aff, 0) << "the affinity node is still reported (for the affinity share)";
}

// The cooperative dispatcher: a worker draws until a transaction is its own, queueing the
// others for their node's worker; one whose worker's queue is full runs on the drawer.
TEST(Dispatcher, NextQueuesOtherNodesTransactionsForTheirWorker) {
  SoftPartition sp(8, 2, {0, 1}, 1.2);
  Dispatcher<uint64_t> d(sp, 1.0, 1);  // delta 1: affinity always
  std::vector<uint64_t> keys = {1, 3, 5, 1, 3, 5, 1, 2};  // node 1, ..., node 1 (x7), node 0
  size_t next = 0;
  auto draw = [&] { return keys[next++]; };
  auto parts = [](const uint64_t& k, std::vector<uint64_t>& out) { out.push_back(k); };
  int aff = -2;
  // Worker 0 draws 1, 3, 5, 1 (queued for worker 1), then 3: worker 1's queue is full.
  EXPECT_EQ(d.next(0, draw, parts, aff), 3u);
  EXPECT_EQ(aff, 1) << "ran off its affinity node";
  EXPECT_EQ(d.overflow(), 1u);
  for (uint64_t want : {1, 3, 5, 1}) EXPECT_EQ(d.next(1, draw, parts, aff), want) << "worker 1 runs its queue";
  EXPECT_EQ(next, 5u) << "nothing drawn while a queue had work";
}

// Workers drawing and assigning concurrently while Algorithm 4 remaps (under TSan in CI): every
// transaction drawn is run once or still waits in a queue.
TEST(Dispatcher, ConcurrentWorkersRunEveryTransactionOnce) {
  SoftPartition sp(64, 2, {0, 1, 0, 1}, 1.2);
  Dispatcher<uint64_t> d(sp, 0.3, 1);
  std::atomic<uint64_t> drawn{0};
  std::atomic<bool> stop{false};
  std::vector<std::vector<uint64_t>> ran(4);
  std::thread remapper([&] {
    while (!stop.load()) sp.remap();
  });
  std::vector<std::thread> ws;
  for (int t = 0; t < 4; t++)
    ws.emplace_back([&, t] {
      Rng r(uint64_t(t) + 1);
      for (int i = 0; i < 2000; i++) {
        int aff;
        ran[size_t(t)].push_back(d.next(
            t, [&] { return drawn.fetch_add(1) * 64 + r.below(64); },  // unique, any partition
            [](const uint64_t& x, std::vector<uint64_t>& out) { out.push_back(x % 64); }, aff));
      }
    });
  for (auto& w : ws) w.join();
  stop.store(true);
  remapper.join();
  std::set<uint64_t> seen;
  for (auto& v : ran)
    for (uint64_t x : v) EXPECT_TRUE(seen.insert(x / 64).second) << "transaction " << x / 64 << " ran twice";
  EXPECT_EQ(seen.size(), 8000u);
  EXPECT_LE(drawn.load() - seen.size(), 4 * Dispatcher<uint64_t>::kQueue) << "the rest waits in queues";
}

TEST(NumaPlan, OneRealNodeNeedsVirtualNodesForAPolicyOfTwo) {
  Options o;
  o.threads = 2;
  for (const char* policy : {"remote", "naive", "local-write", "soft-partition"}) {
    o.numa_policy = policy;
    try {
      plan_numa(o, {0});
      ADD_FAILURE() << policy << " on one real node without --numa-nodes did not throw";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("add --numa-nodes 2"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("1 real one"), std::string::npos) << e.what();
    }
  }
  o.numa_policy = "soft-partition";
  o.numa_nodes = 2;
  NumaPlan p = plan_numa(o, {0});
  EXPECT_TRUE(p.virtual_nodes());
  auto j = p.to_json();
  EXPECT_EQ(j["virtual_nodes"], 2);
  EXPECT_EQ(j["real_nodes"], 0);
  EXPECT_EQ(j["node_list"][1]["kind"], "virtual");
  EXPECT_EQ(p.thread_node, (std::vector<int>{0, 1}));
  // A host with two real nodes: they are used, and named real.
  o.numa_nodes = 0;
  p = plan_numa(o, {0, 1});
  EXPECT_FALSE(p.virtual_nodes());
  EXPECT_EQ(p.to_json()["real_nodes"], 2);
  EXPECT_EQ(p.real, (std::vector<int>{0, 1}));
  // local and remote keep every thread on node 0.
  o.numa_policy = "remote";
  o.numa_nodes = 2;
  EXPECT_EQ(plan_numa(o, {0}).thread_node, (std::vector<int>{0, 0}));
}

TEST(NumaPlan, ARealNodeTheHostLacksIsAnError) {
  Options o;
  o.numa_real_nodes = "0,3";
  o.numa_nodes = 2;
  try {
    plan_numa(o, {0, 1});
    ADD_FAILURE() << "node 3 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NUMA node 3 does not exist"), std::string::npos) << e.what();
  }
  o.numa_real_nodes = "1";
  EXPECT_THROW(plan_numa(o, {0, 1}), std::invalid_argument) << "one node named, two asked";
}

TEST(NumaPlan, GroupBindingFillsANodeFirst) {
  EXPECT_EQ(dev::bind_threads(dev::Placement::SoftPartition, 2, 5, "group", 3), (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(dev::bind_threads(dev::Placement::SoftPartition, 2, 5, "even", 3), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(dev::bind_threads(dev::Placement::Local, 2, 3, "even", 3), (std::vector<int>{0, 0, 0}));
}

// The device model under each placement: which accesses are remote, by kind, and what a remote
// one costs (optane-100: a write-back 2.3x, a read 1.2x).
TEST(NumaDevice, PlacementsDecideWhichAccessesAreRemote) {
  TempPath p("numa-dev");
  dev::DeviceOptions d = test::device_options(p.str(), 16ull << 20, "optane-100");
  d.numa_nodes = 2;
  dev::NvmImage img(d);
  char* nvm = img.region("r", 8ull << 20, dev::RegionKind::Volatile).base;
  alignas(4096) static char dram[2 * dev::kInterleaveBytes];
  dev::set_thread_node(0);
  auto run = [&](dev::Placement pl) {
    dev::set_numa_layout(pl, 2, {0, 1});
    dev::Counters c0 = dev::my_counters();
    dev::read(nvm, 64);
    dev::write(nvm + dev::kInterleaveBytes, 64);
    dev::read(dram, 8);
    dev::write(dram + dev::kInterleaveBytes, 8);
    dev::pay_debt();
    return dev::my_counters() - c0;
  };
  dev::Counters c = run(dev::Placement::Remote);
  EXPECT_EQ(c.remote_nvm_reads, 1u);
  EXPECT_EQ(c.remote_nvm_writes, 1u);
  EXPECT_EQ(c.remote_dram_reads, 1u);
  EXPECT_EQ(c.remote_dram_writes, 1u);
  EXPECT_EQ(c.remote, 4u);
  EXPECT_EQ(c.nvm_reads, 1u);
  EXPECT_EQ(c.dram_writes, 1u);
  c = run(dev::Placement::Local);
  EXPECT_EQ(c.remote, 0u);
  c = run(dev::Placement::Naive);  // interleaved 4 KB pages: of two neighbours, one is node 1's
  EXPECT_EQ(c.remote_nvm_reads, 0u) << "the region starts 2 MB aligned: its first page is node 0's";
  EXPECT_EQ(c.remote_nvm_writes, 1u);
  EXPECT_EQ(c.remote_dram_writes + c.remote_dram_reads, 1u);
  // Costs: the same write-back, local then remote.
  dev::set_numa_layout(dev::Placement::Local, 2, {0, 1});
  dev::Counters a = dev::my_counters();
  dev::write(nvm, 256);
  uint64_t local = (dev::my_counters() - a).charged_cycles;
  dev::set_numa_layout(dev::Placement::Remote, 2, {0, 1});
  a = dev::my_counters();
  dev::write(nvm, 256);
  uint64_t remote = (dev::my_counters() - a).charged_cycles;
  dev::pay_debt();
  EXPECT_NEAR(double(remote) / double(local), 2.3, 0.05);
  // Per-node pools: a registered pool's region r is worker r's node; other DRAM the thread's.
  dev::set_numa_layout(dev::Placement::LocalWrite, 2, {0, 1});
  dev::add_dram_pool(dram, dev::kInterleaveBytes, 2);
  EXPECT_EQ(dev::dram_node(dram), 0);
  EXPECT_EQ(dev::dram_node(dram + dev::kInterleaveBytes), 1);
  dev::remove_dram_pool(dram);
  EXPECT_EQ(dev::dram_node(dram + dev::kInterleaveBytes), 0) << "not in a pool: the thread's own";
  EXPECT_EQ(dev::nvm_node(nvm), dev::nvm_node(nvm + 64));
}

// NUMA-local write (journal 4.2.2): under local-write every NVM write of Zen goes to the
// writer's node (its heap region's pages come from there), and a write to a tuple cached in
// another node's Met-Cache region copies the entry into the writer's region first. Four workers
// on two nodes run transfers at once over the same accounts, each counting its own traffic:
// under local-write none writes a remote pool; under naive, the same transactions do.
TEST(ZenNuma, LocalWriteNeverWritesARemotePool) {
  constexpr int kThreads = 4;
  constexpr uint64_t kRows = 400;
  auto run = [](const char* policy) {
    TempPath p("zen-numa");
    test::DbOptions o;
    o.rows = kRows;
    o.threads = kThreads;  // even binding: workers 0 and 2 on node 0, 1 and 3 on node 1
    o.numa_nodes = 2;
    o.numa_policy = policy;
    o.dram_bytes = 4ull << 20;
    test::ZenDb<cc::Cicada> db(p.str(), o);
    db.load(100);
    test::CCServices<cc::Cicada> svc(kThreads);
    using Mgr = test::ZenDb<cc::Cicada>::Mgr;
    std::vector<dev::Counters> per(kThreads);
    std::set<int> nodes;
    std::atomic<int> ready{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; t++) {
      nodes.insert(dev::node_of_thread(t));
      workers.emplace_back([&, t] {
        dev::set_thread_node(dev::node_of_thread(t));
        Mgr m(*db.eng, t);
        Rng r(5 + uint64_t(t));
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();  // all write at once
        dev::Counters c0 = dev::my_counters();
        for (int done = 0, tries = 0; done < 300 && tries < 100000; tries++) {
          uint64_t a = r.below(kRows), b = (a + 1 + r.below(kRows - 1)) % kRows;
          done += test::transfer(m, a, b, 1);
        }
        dev::pay_debt();
        per[size_t(t)] = dev::my_counters() - c0;
      });
    }
    for (auto& w : workers) w.join();
    dev::set_thread_node(0);
    EXPECT_EQ(nodes.size(), 2u) << "workers on both nodes";
    dev::Counters c;
    for (auto& x : per) c += x;
    EXPECT_EQ(db.total(), int64_t(kRows) * 100);
    auto st = db.eng->stats();
    return std::make_tuple(c, st["cross_region_copies"].get<uint64_t>(), st["cross_region_in_place"].get<uint64_t>());
  };
  auto [c, copies, in_place] = run("local-write");
  EXPECT_GT(c.nvm_writes, uint64_t(kThreads) * 300 * 2);
  EXPECT_EQ(c.remote_nvm_writes, 0u) << "an NVM write to another node's pool";
  EXPECT_GT(copies, 0u) << "tuples cached in another region were copied before writing";
  EXPECT_GT(c.remote_nvm_reads + c.remote_dram_reads, 0u) << "reads may be remote";
  (void)in_place;  // in place when another transaction has the entry pinned: a DRAM write only
  auto [n, copies2, in_place2] = run("naive");
  EXPECT_GT(n.remote_nvm_writes, 0u) << "naive interleaves the NVM pool";
  (void)copies2, (void)in_place2;
}
