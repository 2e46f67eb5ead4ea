// The FOEDUS-style engine (storage/engines/foedus/) with its OCC (concurrency_control/foedus.h):
// page geometry and its errors, the snapshot cache's CLOCK, the pointer set, OCC under
// concurrency while the gleaner runs, the gleaner's drop of unmodified volatile pages, restart
// from the logs (7.7), the mappers' pieces of one log against one pass over it, images of other engines refused, and the ordered tree: splits, scans,
// phantoms caught by the node set, its snapshot and restart, paired inserts under concurrency,
// and striped inserts, deletes and scans of many threads checked against a reference; restart's
// lists on any thread count (free pages merged, the tree's interior read back, leaves spliced).
// (Its inserts, deletes and TPC-C also run in test_insert_delete.cpp and test_tpcc.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "concurrency_control/foedus.h"
#include "storage/engines/foedus/foedus.h"
#include "tests/unit/engine_util.h"
#include "tests/unit/heap_bytes.h"

using namespace nvt;

namespace {

using test::TempPath;
using Db = test::TestDb<cc::Foedus, foedus::Foedus>;
using Mgr = Db::Mgr;

// 512 B pages: 6 accounts per leaf, 28 pointers per interior page, a three-level tree for 1000.
test::DbOptions small(uint64_t rows = 1000, int threads = 2) {
  test::DbOptions o;
  o.rows = rows;
  o.threads = threads;
  o.page_size = 512;
  o.dram_bytes = 8ull << 20;
  o.log_bytes = 4ull << 20;
  o.epoch_ms = 5;
  o.gleaner_interval_ms = 20;
  return o;
}

uint64_t stat(const nlohmann::json& j, const char* a, const char* b) { return j[a][b].get<uint64_t>(); }

TEST(FoedusPages, PageSizeMustBeAPowerOfTwoThatHoldsARecord) {
  try {
    foedus::Geometry(3000, 64, "accounts");
    FAIL() << "3000 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not a power of two"), std::string::npos) << e.what();
  }
  try {
    foedus::Geometry(512, 1000, "usertable");
    FAIL() << "a 1000 B tuple in a 512 B page accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold one record of table usertable"), std::string::npos) << e.what();
  }
  foedus::Geometry g(512, 64, "accounts");
  EXPECT_EQ(g.slot, 72u);
  EXPECT_EQ(g.per_leaf, 6u);
  EXPECT_EQ(g.fanout, 28u);
  foedus::ArrayShape s(g, 1000);
  EXPECT_EQ(s.pages, (std::vector<uint64_t>{167, 6, 1}));
  EXPECT_EQ(s.children(2, 0), 6u);
  EXPECT_EQ(s.children(1, 5), 167u - 5 * 28);
  EXPECT_EQ(s.records(166), 1000u - 166 * 6);
}

// Restart's reset of the snapshot area: on any number of threads, the free pages are exactly
// the pages below the high-water mark that no share marked live (page 0 never), ascending, and
// take() hands them out in that order before the high-water mark.
TEST(FoedusSnapshotArea, ResetListsTheUnmarkedPagesAscendingOnAnyThreadCount) {
  const uint64_t pages = 10007, hw = 9001;
  std::vector<char> mem(pages * 64);
  std::vector<uint64_t> live, want;
  std::mt19937_64 rng(7);
  for (uint64_t i = 1; i < hw + 50; i++) {
    if (rng() % 3 != 0) live.push_back(i);  // some past the mark: ignored
    else if (i < hw) want.push_back(i);
  }
  std::shuffle(live.begin(), live.end(), rng);
  for (int threads : {1, 2, 3, 8}) {
    foedus::SnapshotArea area(dev::Region{mem.data(), pages * 64}, 64);
    area.reset(hw, threads, [&](int w, int n, auto&& mark) {
      for (size_t i = live.size() * size_t(w) / size_t(n); i < live.size() * size_t(w + 1) / size_t(n); i++) mark(live[i]);
    });
    EXPECT_EQ(area.high_water(), hw) << threads;
    EXPECT_EQ(area.in_use(), hw - 1 - want.size()) << threads;
    std::vector<uint64_t> got;
    for (size_t i = 0; i < want.size() + 2; i++) got.push_back(area.take());
    std::vector<uint64_t> expect = want;
    expect.push_back(hw);
    expect.push_back(hw + 1);
    EXPECT_EQ(got, expect) << threads << " threads";
  }
}

// What a gleaning supersedes goes back to the free list merged in ascending order, on any
// number of threads: single pages and whole lists (an ordered tree's old interior) alike, and
// the free pages not yet taken before them.
TEST(FoedusSnapshotArea, ReleasedPagesMergeIntoTheFreeListAscendingOnAnyThreadCount) {
  const uint64_t pages = 60000, hw = 50000;
  std::vector<char> mem(pages * 64);
  std::mt19937_64 rng(9);
  std::vector<uint64_t> page_ids(hw - 1);
  for (uint64_t i = 1; i < hw; i++) page_ids[i - 1] = i;
  std::shuffle(page_ids.begin(), page_ids.end(), rng);
  // A third free at the restart, a third retired one by one, a third as two lists.
  const size_t third = page_ids.size() / 3;
  std::vector<uint64_t> free0(page_ids.begin(), page_ids.begin() + long(third));
  std::vector<uint64_t> singles(page_ids.begin() + long(third), page_ids.begin() + long(2 * third));
  std::vector<uint64_t> listed(page_ids.begin() + long(2 * third), page_ids.end());
  for (int threads : {1, 2, 3, 8}) {
    foedus::SnapshotArea area(dev::Region{mem.data(), pages * 64}, 64);
    std::vector<uint8_t> live(hw, 1);
    for (uint64_t f : free0) live[f] = 0;
    area.reset(hw, threads, [&](int w, int, auto&& mark) {
      if (w == 0)
        for (uint64_t i = 1; i < hw; i++)
          if (live[i]) mark(i);
    });
    std::vector<uint64_t> want = free0;
    std::sort(want.begin(), want.end());
    // Some free pages taken first: they are not free again.
    for (int i = 0; i < 10; i++) ASSERT_EQ(area.take(), want[size_t(i)]);
    want.erase(want.begin(), want.begin() + 10);
    for (uint64_t s : singles) area.retire(s);
    for (size_t half : {size_t(0), size_t(1)}) {
      ParallelVector<foedus::SnapshotPtr> l;
      for (size_t i = half; i < listed.size(); i += 2) l.push_back(foedus::make_snapshot_ptr(7, listed[i]));
      area.retire(std::move(l));
    }
    area.release_retired(threads);
    want.insert(want.end(), singles.begin(), singles.end());
    want.insert(want.end(), listed.begin(), listed.end());
    std::sort(want.begin(), want.end());
    std::vector<uint64_t> got;
    for (size_t i = 0; i < want.size() + 1; i++) got.push_back(area.take());
    want.push_back(hw);
    EXPECT_EQ(got, want) << threads << " threads";
  }
}

// An ordered tree's snapshot interior written and read back, and its leaf list spliced, give
// the same lists on any number of threads as on one (each thread's share at its offset).
TEST(FoedusTreeSnapshot, InteriorsReadBackAndSplicedLeavesAreTheSameOnAnyThreadCount) {
  const uint32_t ps = 256;
  const uint64_t pages = 200000;
  std::vector<char> mem(pages * ps);
  foedus::TreeGeometry g(ps, 8, "t");
  ASSERT_GE(g.fanout, 3u);
  // 100 000 leaves of key ranges [10 i, 10 i + 10) (their pages are not read here).
  const uint64_t n = 100000;
  auto tree = [&] {
    foedus::TreeSnapshot t{3, g, {}, {}, 0, {}};
    t.leaves.resize(n);
    for (uint64_t i = 0; i < n; i++) t.leaves[i] = {i * 10, i + 1 == n ? foedus::kInfKey : i * 10 + 10, foedus::make_snapshot_ptr(1, i + 1)};
    t.leaves[0].low = 0;
    return t;
  };
  std::vector<foedus::TreeLeaf> ref_leaves;
  std::vector<uint64_t> ref_spliced_lows;
  for (int threads : {1, 2, 3, 8}) {
    foedus::SnapshotArea area(dev::Region{mem.data(), pages * ps}, ps);
    area.reset(n + 1, 1, [](int, int, auto&& mark) {
      for (uint64_t i = 1; i <= n; i++) mark(i);  // the leaves' pages
    });
    foedus::TreeSnapshot t = tree();
    uint64_t written = foedus::write_tree_interiors(t, area, 1, 1, threads);
    EXPECT_EQ(written, t.interior.size());
    uint64_t levels = 0;
    for (uint64_t k = n; levels == 0 || k > 1; levels++) k = (k + g.fanout - 1) / g.fanout;
    std::vector<foedus::SnapshotPtr> written_interior(t.interior.begin(), t.interior.end());
    foedus::TreeSnapshot back{3, g, {}, {}, 0, {}};
    foedus::read_tree_snapshot(back, area, t.root, threads);
    ASSERT_EQ(back.leaves.size(), n) << threads;
    for (uint64_t i = 0; i < n; i++) {
      ASSERT_EQ(back.leaves[i].low, t.leaves[i].low) << i;
      ASSERT_EQ(back.leaves[i].high, t.leaves[i].high) << i;
      ASSERT_EQ(back.leaves[i].ptr, t.leaves[i].ptr) << i;
    }
    std::vector<foedus::SnapshotPtr> read_interior(back.interior.begin(), back.interior.end());
    std::sort(written_interior.begin(), written_interior.end());
    std::sort(read_interior.begin(), read_interior.end());
    EXPECT_EQ(read_interior, written_interior) << threads << ": every interior page, once";
    EXPECT_EQ(back.root, t.root);
    // Writing the interior again retires the old one as a list: released, every page comes back.
    uint64_t before = area.in_use();
    foedus::write_tree_interiors(t, area, 2, 2, threads);
    area.release_retired(threads);
    EXPECT_EQ(area.in_use(), before) << "the old interior is free again";
    // Splice: leaves 0, 5, 6 and the last give way to 1, 3, 2 and 4 pieces.
    std::vector<foedus::LeafList> pieces(4);
    const uint64_t at[] = {0, 5, 6, n - 1}, count[] = {1, 3, 2, 4};
    for (size_t c = 0; c < 4; c++)
      for (uint64_t j = 0; j < count[c]; j++) pieces[c].push_back({at[c] * 10 + j, at[c] * 10 + j + 1, foedus::make_snapshot_ptr(9, 1000000 + c * 10 + j)});
    std::vector<std::pair<uint64_t, const foedus::LeafList*>> changed;
    for (size_t c = 0; c < 4; c++) changed.push_back({at[c], &pieces[c]});
    foedus::splice_tree_leaves(t, changed, threads);
    std::vector<uint64_t> lows;
    for (const auto& l : t.leaves) lows.push_back(l.low);
    if (threads == 1) {
      ASSERT_EQ(t.leaves.size(), n + 6);
      const uint64_t head[] = {0, 10, 20, 30, 40, 50, 51, 52, 60, 61, 70, 80};
      for (size_t i = 0; i < std::size(head); i++) EXPECT_EQ(t.leaves[i].low, head[i]) << i;
      EXPECT_EQ(t.leaves[n + 2].low, (n - 1) * 10);
      EXPECT_EQ(t.leaves[n + 5].low, (n - 1) * 10 + 3);
      EXPECT_TRUE(std::is_sorted(lows.begin(), lows.end()));
      ref_spliced_lows = lows;
    } else {
      EXPECT_EQ(lows, ref_spliced_lows) << threads << " threads";
    }
  }
}

// CLOCK: a page referenced since the hand last passed survives a sweep, an unreferenced one is
// evicted, a pinned one is never; a hit returns the page's bytes.
TEST(FoedusSnapshotCache, ClockEvictsUnreferencedUnpinnedFrames) {
  dev::DramBudget budget(1 << 20);
  constexpr uint32_t kPage = 512;
  foedus::SnapshotCache c(budget, 4, kPage);
  std::vector<char> nvm(kPage * 16);
  for (size_t i = 0; i < nvm.size(); i++) nvm[i] = char(i / kPage);
  auto page = [&](uint64_t i) { return reinterpret_cast<const foedus::Page*>(nvm.data() + i * kPage); };
  auto get = [&](uint64_t i) {
    auto pin = c.get(foedus::make_snapshot_ptr(1, i), page(i));
    EXPECT_EQ(reinterpret_cast<const char*>(pin.page)[kPage - 1], char(i));
    c.unpin(pin.frame);
    return pin.hit;
  };
  for (uint64_t i = 1; i <= 4; i++) EXPECT_FALSE(get(i));
  EXPECT_TRUE(get(1));
  EXPECT_FALSE(get(5));  // every frame referenced: one sweep clears them all, the first goes
  EXPECT_FALSE(get(1));
  EXPECT_TRUE(get(3));   // referenced again since the sweep...
  EXPECT_FALSE(get(6));  // ...so the hand passes it and evicts the next unreferenced frame
  EXPECT_TRUE(get(3));
  // A pinned frame is skipped however often the hand comes round.
  auto pin = c.get(foedus::make_snapshot_ptr(1, 3), page(3));
  for (uint64_t i = 7; i < 15; i++) get(i);
  EXPECT_TRUE(pin.hit);
  c.unpin(pin.frame);
  EXPECT_TRUE(get(3));
  EXPECT_GT(c.evictions(), 5u);
}

// Algorithm 2's pointer set: a transaction that read through a snapshot pointer aborts when a
// volatile page was installed there before its pre-commit; its retry reads the volatile page.
TEST(FoedusOcc, PointerSetAbortsAReaderWhenAVolatilePageAppears) {
  TempPath p("foedus-ptrset");
  Db db(p.str(), small());
  db.load(100);
  Mgr reader(*db.eng, 0), writer(*db.eng, 1);
  auto snapshot_reads = [&] { return stat(db.eng->stats(), "reads", "snapshot"); };
  reader.begin();
  ASSERT_NE(reader.read(0, 500), nullptr);
  EXPECT_EQ(snapshot_reads(), 1u) << "after load only the root is volatile";
  ASSERT_TRUE(test::transfer(writer, 501, 502, 1));  // installs volatile pages over key 500 too
  EXPECT_FALSE(reader.commit());
  EXPECT_EQ(reader.cause(), AbortCause::Validation);
  reader.begin();
  const char* img = reader.read(0, 500);
  ASSERT_NE(img, nullptr);
  EXPECT_TRUE(reader.commit());
  EXPECT_EQ(snapshot_reads(), 1u) << "the retry read the volatile page";
  // A reader in a subtree nobody installed into commits.
  reader.begin();
  ASSERT_NE(reader.read(0, 10), nullptr);
  ASSERT_TRUE(test::transfer(writer, 600, 700, 1));
  EXPECT_TRUE(reader.commit());
  // A snapshot read upgraded to a write installs its page and retries.
  reader.begin();
  ASSERT_NE(reader.read(0, 20), nullptr);
  EXPECT_EQ(reader.write(0, 20), nullptr);
  EXPECT_EQ(reader.cause(), AbortCause::Validation);
  reader.abort();
  EXPECT_TRUE(test::transfer(reader, 20, 21, 3));
  EXPECT_EQ(db.total(), 100000);
}

// Bank transfers on three threads and audits on a fourth, while the log writer and the gleaner
// run (5 ms epochs, a gleaning every 20 ms that installs snapshot pointers and drops pages under
// the workers): the total never changes, every committed audit sees it. A 300-row audit under
// OCC can starve behind three writers on a slow host (TSan on 2 busy cores: none committed), so
// once the gleaner has done its part the writers pause 2 ms between transfers until audits have
// committed; they keep writing, so audits still race them.
TEST(FoedusOcc, ConcurrentTransfersAndAuditsWhileTheGleanerRuns) {
  TempPath p("foedus-bank");
  constexpr uint64_t kRows = 300;
  Db db(p.str(), small(kRows, 4));
  db.load(100);
  db.eng->start();
  std::atomic<int> bad{0}, audits{0};
  std::atomic<bool> done{false}, slow_writers{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; t++)
    ts.emplace_back([&, t] {
      Mgr m(*db.eng, t);
      std::mt19937_64 r(uint64_t(t) + 1);
      for (int i = 0; i < 1500 || !done.load(); i++) {
        // The written block of 30 accounts moves on every 40 ms, so the pages left behind stop
        // changing and the gleaner can drop them.
        uint64_t ms = uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch()).count());
        uint64_t base = ms / 40 % 10 * 30;
        uint64_t a = base + r() % 30, b = base + (a - base + 1 + r() % 29) % 30;
        while (!test::transfer(m, a, b, int64_t(r() % 7))) std::this_thread::yield();
        if (slow_writers.load() && !done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  ts.emplace_back([&] {
    Mgr m(*db.eng, 3);
    while (!done.load()) {
      int64_t sum;
      if (test::audit(m, kRows, &sum)) {
        audits++;
        if (sum != int64_t(kRows) * 100) bad++;
      }
    }
  });
  // Until the gleaner has installed and dropped under the workers a few times.
  auto enough = [&] {
    auto g = db.eng->stats()["gleaner"];
    return g["runs"].get<uint64_t>() >= 5 && g["volatile_pages_dropped"].get<uint64_t>() >= 5;
  };
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!enough() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  slow_writers = true;
  while (audits.load() < 3 && std::chrono::steady_clock::now() < until + std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  done = true;
  for (auto& t : ts) t.join();
  db.eng->stop();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(audits.load(), 0);
  EXPECT_EQ(db.total(), int64_t(kRows) * 100);
  auto s = db.eng->stats();
  EXPECT_GT(s["gleaner"]["runs"].get<uint64_t>(), 0u) << s.dump();
  EXPECT_GT(s["gleaner"]["volatile_pages_dropped"].get<uint64_t>(), 0u) << s.dump();
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
}

// 7.5: a gleaning covers the durable epochs, writes the changed pages, and drops every volatile
// page nobody modified since; the data read afterwards come from the new snapshot.
TEST(FoedusGleaner, SnapshotThenDropUnmodifiedVolatilePages) {
  TempPath p("foedus-glean");
  Db db(p.str(), small());
  db.load(100);
  Mgr m(*db.eng, 0);
  EXPECT_EQ(db.eng->volatile_pages(), 1u) << "only the root";
  for (int i = 0; i < 40; i++) ASSERT_TRUE(test::transfer(m, uint64_t(i * 13 % 1000), uint64_t(i * 29 % 1000 + 1) % 1000, 5));
  EXPECT_GT(db.eng->volatile_pages(), 10u);
  auto before = db.snapshot();
  db.eng->sync(db.eng->thread(0));
  ASSERT_TRUE(db.eng->glean_now());
  EXPECT_EQ(db.eng->volatile_pages(), 1u) << "nothing was modified after the snapshot's epoch";
  EXPECT_EQ(db.snapshot().images, before.images);
  EXPECT_EQ(db.snapshot().versions, before.versions);
  auto g = db.eng->stats()["gleaner"];
  EXPECT_EQ(g["log_records"].get<uint64_t>(), 80u);
  EXPECT_LE(g["records_applied"].get<uint64_t>(), 80u);
  EXPECT_GT(g["snapshot_pages_written"].get<uint64_t>(), 3u);
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
  // A page modified after the snapshot's epoch is kept at the next gleaning.
  ASSERT_TRUE(test::transfer(m, 1, 2, 1));
  uint64_t pages = db.eng->volatile_pages();
  EXPECT_FALSE(db.eng->glean_now()) << "no new durable epoch";
  EXPECT_EQ(db.eng->volatile_pages(), pages);
  EXPECT_EQ(db.total(), 100000);
}

// The device traffic a gleaning reports is what its threads issued, once: every fence and NVM
// write the device counted while it ran (its helpers publish theirs as they end; nothing else
// runs), no more.
TEST(FoedusGleaner, OneGleaningReportsTheFencesItIssuesOnce) {
  TempPath p("foedus-glean-fences");
  Db db(p.str(), small());
  db.load(100);
  Mgr m(*db.eng, 0);
  for (int i = 0; i < 40; i++) ASSERT_TRUE(test::transfer(m, uint64_t(i * 13 % 1000), uint64_t(i * 29 % 1000 + 1) % 1000, 5));
  db.eng->sync(db.eng->thread(0));
  auto device = [] {
    dev::Counters c = dev::my_counters();
    c += dev::published();
    return c;
  };
  auto reported = [&] { return db.eng->stats()["gleaner"]; };
  auto g0 = reported();
  dev::Counters c0 = device();
  ASSERT_TRUE(db.eng->glean_now());
  dev::Counters issued = device() - c0;
  auto g1 = reported();
  // One reducer's fence, the interior pages' fence, the snapshot metadata's persist.
  EXPECT_EQ(issued.sfence, 3u);
  EXPECT_EQ(g1["sfence"].get<uint64_t>() - g0["sfence"].get<uint64_t>(), issued.sfence);
  EXPECT_EQ(g1["nvm_write_bytes"].get<uint64_t>() - g0["nvm_write_bytes"].get<uint64_t>(), issued.nvm_write_bytes);
  EXPECT_EQ(g1["nvm_read_bytes"].get<uint64_t>() - g0["nvm_read_bytes"].get<uint64_t>(), issued.nvm_read_bytes);
}

// Table 3's stages, each from its own records: 60 transfers between two accounts write 120 log
// records of two keys; the mapper reads 120, compaction leaves the reducer 2 to apply, and its
// throughput is those 2 over its time (not the 120 the mapper read). The log writer reports the
// records it wrote to the files: the 120 the gleaner then finds there.
TEST(FoedusGleaner, EachStageReportsItsOwnRecords) {
  TempPath p("foedus-glean-stages");
  Db db(p.str(), small());
  db.load(100);
  Mgr m(*db.eng, 0);
  db.eng->begin_measure();
  for (int i = 0; i < 60; i++) ASSERT_TRUE(test::transfer(m, 3, 500, i % 2 ? 1 : -1));
  db.eng->sync(db.eng->thread(0));
  ASSERT_TRUE(db.eng->glean_now());
  auto s = db.eng->stats();
  auto g = s["gleaner_measured"];
  EXPECT_EQ(g["log_records"].get<uint64_t>(), 120u);
  EXPECT_EQ(g["reducer_input_records"].get<uint64_t>(), 2u) << "the mapper's compaction: the last write of each key";
  EXPECT_EQ(g["records_applied"].get<uint64_t>(), 2u);
  double map_s = g["map_s"].get<double>(), reduce_s = g["reduce_s"].get<double>();
  ASSERT_GT(map_s, 0);
  ASSERT_GT(reduce_s, 0);
  EXPECT_DOUBLE_EQ(g["mapper_records_per_s"].get<double>(), 120 / map_s);
  EXPECT_DOUBLE_EQ(g["reducer_records_per_s"].get<double>(), 2 / reduce_s);
  EXPECT_GE(g["interior_s"].get<double>(), 0);
  EXPECT_GT(g["work_bytes_peak"].get<uint64_t>(), 0u);
  EXPECT_EQ(g["work_bytes_unbudgeted"].get<uint64_t>(), 0u);
  EXPECT_EQ(s["log_writer"]["records"].get<uint64_t>(), 120u);
  EXPECT_EQ(db.dram->breakdown()["foedus.gleaner_work"], 0u) << "working memory given back";
}

// The mappers cut a log into pieces that start at a guess (the first intact record) checked
// against the chain from the log's start. Every A record (200 B payload) carries a sealed B record
// (16 B payload) inside its payload, so a piece that starts inside an A record guesses wrong and is
// parsed again; log 0 wraps round its ring's end; its last records are above the epoch. On 1, 2,
// 3 and 8 mappers the gleaner takes exactly what one pass over each log takes (a reference built
// here), stops where that pass stops, and writes the same rows: a restart (verify), a torn log, a
// run-time gleaning (no verify).
TEST(FoedusGleaner, PiecesOfALogTakeWhatOnePassTakesOnAnyThreadCount) {
  const foedus::Geometry ga(4096, 200, "a"), gb(4096, 16, "b");
  const uint64_t rows = 3000, epoch = 7;
  struct Rec {
    uint32_t storage;  // 1: A, 2: B
    uint64_t key, tid;
    uint64_t off;  // in the log's range
  };
  struct Log {
    std::vector<char> ring;
    uint64_t from = 0, len = 0;
    std::vector<Rec> recs;
  };
  std::mt19937_64 rng(5);
  uint64_t seq = 0;
  auto seal = [](char* at, uint32_t storage, uint64_t key, uint64_t tid, uint32_t len) {
    foedus::LogRecord h{foedus::LogRecord::size_for(len), storage, key, tid};
    h.seal(at + sizeof h, len);
    memcpy(at, &h, sizeof h);
  };
  auto make_log = [&](uint64_t cap, uint64_t from, int n, int above) {
    Log l;
    l.ring.assign(cap, 0);
    l.from = from;
    std::vector<char> rec;
    for (int i = 0; i < n; i++) {
      const bool a = i % 2 == 0;
      const uint32_t len = a ? ga.len : gb.len;
      const uint64_t key = rng() % rows, tid = uint64_t(i >= n - above ? epoch + 1 : 1 + uint64_t(i) * epoch / uint64_t(n)) << 32 | ++seq;
      rec.assign(foedus::LogRecord::size_for(len), 0);
      char* body = rec.data() + sizeof(foedus::LogRecord);
      for (uint32_t b = 0; b < len; b++) body[b] = char(rng());
      if (a) seal(body + 8, 2, rng() % rows, uint64_t(1) << 32 | 999999, gb.len);  // a record inside the payload
      seal(rec.data(), a ? 1 : 2, key, tid, len);
      for (uint64_t b = 0; b < rec.size(); b++) l.ring[(from + l.len + b) % cap] = rec[b];
      l.recs.push_back({a ? 1u : 2u, key, tid, l.len});
      l.len += rec.size();
    }
    return l;
  };
  std::vector<Log> logs;
  logs.push_back(make_log(1200000, 10 * 1200000ull - 5000, 6000, 40));  // about 840 KB, across the ring's end
  logs.push_back(make_log(300000, 123456, 60, 0));
  const uint64_t torn_at = logs[0].recs[4001].off;

  for (int variant = 0; variant < 3; variant++) {  // 0: restart, 1: restart of a torn log, 2: run-time gleaning
    const bool verify = variant < 2;
    std::vector<char> saved;
    if (variant == 1) {  // zero one record in the middle
      saved.assign(logs[0].ring.begin(), logs[0].ring.end());
      for (uint64_t b = 0; b < 48; b++) logs[0].ring[(logs[0].from + torn_at + b) % logs[0].ring.size()] = 0;
    }
    // One pass: each log's records up to its first above the epoch (or the torn one).
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> want;  // (storage, key) -> tid
    uint64_t want_records = 0;
    std::vector<uint64_t> want_stop;
    for (size_t i = 0; i < logs.size(); i++) {
      uint64_t stop = logs[i].len;
      for (const Rec& r : logs[i].recs) {
        if ((variant == 1 && i == 0 && r.off == torn_at) || foedus::epoch_of(r.tid) > epoch) {
          stop = r.off;
          break;
        }
        want_records++;
        uint64_t& t = want[{r.storage, r.key}];
        t = std::max(t, r.tid & foedus::kTidBits);
      }
      want_stop.push_back(logs[i].from + stop);
    }
    std::map<std::pair<uint32_t, uint64_t>, std::vector<char>> first_rows;
    for (int mappers : {1, 2, 3, 8}) {
      SCOPED_TRACE("variant " + std::to_string(variant) + ", " + std::to_string(mappers) + " mappers");
      std::vector<char> nvm(3000ull * 4096);
      foedus::SnapshotArea area(dev::Region{nvm.data(), nvm.size()}, 4096);
      std::vector<foedus::SnapshotTree> trees;
      for (auto [id, g] : {std::pair{1u, ga}, std::pair{2u, gb}}) {
        foedus::SnapshotTree t{id, foedus::ArrayShape(g, rows), {}};
        for (uint64_t n : t.shape.pages) t.ptrs.emplace_back(n, 0);
        trees.push_back(std::move(t));
      }
      std::vector<foedus::TreeSnapshot> ordered;
      std::vector<foedus::LogRange> ranges;
      for (Log& l : logs) ranges.push_back({l.ring.data(), l.ring.size(), l.from, l.from + l.len, verify});
      foedus::GleanResult r = foedus::glean(trees, ordered, area, ranges, epoch, 1, mappers, mappers);
      EXPECT_EQ(r.stop, want_stop);
      EXPECT_EQ(r.torn, (std::vector<uint8_t>{uint8_t(variant == 1), 0}));
      EXPECT_EQ(r.records, want_records);
      if (mappers == 1) EXPECT_EQ(r.pieces, 2u) << "a piece per log";
      else EXPECT_GT(r.pieces_parsed_again, 0u) << r.pieces << " pieces, every guess right: the test misses its case";
      std::map<std::pair<uint32_t, uint64_t>, std::vector<char>> rows_now;
      uint64_t found = 0;
      for (const foedus::SnapshotTree& t : trees)
        for (uint64_t key = 0; key < rows; key++) {
          foedus::SnapshotPtr ptr = t.ptrs[0][t.shape.leaf_of(key)];
          uint64_t tid = 0;
          foedus::Page* pg = ptr ? area.page(foedus::snapshot_index(ptr)) : nullptr;
          if (pg) tid = pg->tid(t.shape.slot_in_leaf(key), t.shape.g.slot)->load();
          auto w = want.find({t.id, key});
          ASSERT_EQ(tid, w == want.end() ? 0 : w->second) << "storage " << t.id << " key " << key;
          if (!tid) continue;
          found++;
          const char* pay = pg->payload(t.shape.slot_in_leaf(key), t.shape.g.slot);
          rows_now[{t.id, key}].assign(pay, pay + t.shape.g.len);
        }
      EXPECT_EQ(found, want.size());
      if (first_rows.empty()) first_rows = rows_now;
      EXPECT_TRUE(rows_now == first_rows) << "the rows' payloads differ from one mapper's";
    }
    if (variant == 1) std::copy(saved.begin(), saved.end(), logs[0].ring.begin());
  }
}

// A cache miss's bytes are what the device model read for it, counted, not the page size
// assumed: no miss, no bytes; then one miss per snapshot page (the interior page, the leaf).
TEST(FoedusSnapshotCache, BytesReadPerMissIsMeasured) {
  TempPath p("foedus-miss-bytes");
  Db db(p.str(), small());
  db.load(100);
  Mgr m(*db.eng, 0);
  db.eng->begin_measure();
  auto cache = [&] { return db.eng->stats()["snapshot_cache"]; };
  EXPECT_EQ(cache()["bytes_read_per_miss"].get<double>(), 0.0) << "no miss yet";
  dev::Counters c0 = dev::my_counters();
  m.begin();
  ASSERT_NE(m.read(0, 500), nullptr);
  ASSERT_TRUE(m.commit());
  uint64_t read = (dev::my_counters() - c0).nvm_read_bytes;
  auto c = cache();
  EXPECT_EQ(c["misses"].get<uint64_t>(), 2u);
  EXPECT_EQ(c["miss_nvm_read_bytes"].get<uint64_t>(), read) << "every NVM byte this read cost came from its misses";
  EXPECT_DOUBLE_EQ(c["bytes_read_per_miss"].get<double>(), double(read) / 2);
}

// FOEDUS over accounts with a DRAM ledger of its own: `budget` in all, `data_cap` (database / P)
// for data, as the drivers build it.
struct CappedDb {
  CappedDb(const std::string& path, const test::DbOptions& o, uint64_t budget, uint64_t data_cap)
      : tables(test::account_tables(o.rows)) {
    eo.threads = o.threads;
    eo.log_bytes = o.log_bytes;
    eo.page_size = o.page_size;
    eo.epoch_ms = o.epoch_ms;
    eo.gleaner_interval_ms = o.gleaner_interval_ms;
    eo.snapshot_cache = o.snapshot_cache;
    dev::DeviceOptions d = test::device_options(path, Engine::nvm_bytes(tables, eo) + (16ull << 20), o.profile,
                                                "engine=foedus " + test::layout_of(tables));
    d.writer_threads = o.threads;
    nvm = std::make_unique<dev::NvmImage>(d);
    heap0 = test::heap_allocated_bytes();
    dram = std::make_unique<dev::DramBudget>(budget, data_cap);
    env = std::make_unique<EngineEnv>(EngineEnv{*nvm, *dram, eo});
    eng = std::make_unique<Engine>(*env, tables);
    nvm->publish();
  }
  ~CappedDb() {
    if (eng) eng->stop();
    eng.reset();
  }
  void load(int64_t balance) {
    char img[test::kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      test::initial_image(img, k, balance);
      eng->load(eng->thread(0), 0, k, img);
    }
    eng->after_load();
  }
  int64_t total() {
    int64_t t = 0;
    char img[test::kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      uint64_t v;
      EXPECT_TRUE(eng->read_current(0, k, img, v));
      t += test::balance_of(img);
    }
    return t;
  }
  using Engine = foedus::Foedus<cc::Foedus>;
  std::vector<TableInfo> tables;
  EngineOptions eo;
  std::unique_ptr<dev::NvmImage> nvm;
  uint64_t heap0 = 0;  // the heap before the ledger and the engine
  std::unique_ptr<dev::DramBudget> dram;
  std::unique_ptr<EngineEnv> env;
  std::unique_ptr<Engine> eng;
};

uint64_t data_bytes(const dev::DramBudget& b) {
  uint64_t n = 0;
  auto kinds = b.kinds();
  for (auto& [what, bytes] : b.breakdown())
    if (kinds[what] == dev::DramUse::Data) n += bytes;
  return n;
}

// Issue 25's one DRAM rule: volatile pages and the snapshot cache are data, at most database / P
// whatever the whole budget (here far larger, as the allowances make it for SmallBank), and
// P changes them; everything else is overhead, and the ledger is what FOEDUS really allocated
// after load, transactions and a gleaning (its working memory given back). The ledger's
// `private` is the per-thread allowance for the TxnManager's transaction buffers (not FOEDUS's;
// its threads' copies are foedus.thread_copies): left out of the comparison.
TEST(FoedusDram, DataWithinDatabaseOverPAndTheLedgerIsWhatItAllocated) {
  constexpr uint64_t kRows = 4000;
  const uint64_t db_bytes = kRows * test::kTuple;
  uint64_t pool_at_p4 = 0;
  // The first engine of the process also makes the process's one-time allocations (some 200 KB
  // that a second, identical engine does not add): the heap is checked from the second on.
  bool first = true;
  for (double ratio : {4.0, 4.0, 8.0}) {
    TempPath p("foedus-dram");
    test::DbOptions o = small(kRows, 2);
    const uint64_t cap = uint64_t(double(db_bytes) / ratio);
    CappedDb db(p.str(), o, 8ull << 20, cap);
    db.load(100);
    {
      Mgr m(*db.eng, 0);
      // Within the first 180 accounts (30 leaves): the pool holds them without a gleaner.
      for (int i = 0; i < 200; i++) ASSERT_TRUE(test::transfer(m, uint64_t(i * 37 % 180), uint64_t(i * 53 + 7) % 180, 1));
      for (int i = 0; i < 50; i++) {
        m.begin();
        ASSERT_NE(m.read(0, uint64_t(i * 71 % kRows)), nullptr);
        ASSERT_TRUE(m.commit());
      }
      db.eng->sync(db.eng->thread(0));
      ASSERT_TRUE(db.eng->glean_now());
    }
    const dev::DramBudget& b = *db.dram;
    auto s = db.eng->stats();
    // The pool: data pages, and the index pages every configuration keeps (overhead).
    uint64_t index = b.breakdown().at("foedus.volatile_index_pages");
    uint64_t pool = s["volatile_pages"]["capacity"].get<uint64_t>() * o.page_size - index;
    uint64_t frames = s["snapshot_cache"]["frames"].get<uint64_t>() * o.page_size;
    EXPECT_GT(index, 0u);
    EXPECT_LE(b.data_used(), cap) << "P " << ratio;
    EXPECT_EQ(data_bytes(b), pool + frames);
    EXPECT_EQ(b.data_used(), pool + frames);
    EXPECT_GE(b.data_used(), cap * 9 / 10) << "the data share is used";
    EXPECT_NEAR(double(pool), double(cap) * 3 / 4, double(o.page_size)) << "3/4 volatile pages";
    if (ratio == 4.0) pool_at_p4 = pool;
    else EXPECT_LT(pool, pool_at_p4) << "P sizes FOEDUS's data";
    for (auto& [what, kind] : b.kinds()) {
      if (what != "foedus.volatile_pages" && what != "foedus.snapshot_cache") {
        EXPECT_EQ(kind, dev::DramUse::Overhead) << what;
      }
    }
    EXPECT_EQ(b.breakdown().at("foedus.gleaner_work"), 0u);
    // The heap: everything the ledger lists but `private`, within 5% (allocator rounding) and
    // 32 KB (the engine's small objects: its storages, logs' and threads' state, the snapshot
    // area's free list; some 5-15 KB here).
    uint64_t heap = test::heap_allocated_bytes() - db.heap0;
    uint64_t listed = b.used() - b.breakdown().at("private");
    if (!first) {
      EXPECT_NEAR(double(heap), double(listed), double(listed) * 0.05 + 32768)
          << "P " << ratio << ": heap " << heap << " B, ledger " << listed << " B";
    }
    first = false;
    EXPECT_EQ(db.total(), int64_t(kRows) * 100);
  }
}

// A volatile pool far smaller than the working set (transfers over every page, 2 threads, the
// log writer and gleaner running): installs find the pool empty, wait for the gleaner's drop
// passes (DRAM pressure wakes it) and go on; no money is lost.
TEST(FoedusDram, ConcurrentTransfersRunCorrectlyWithATinyVolatilePool) {
  constexpr uint64_t kRows = 1000;
  TempPath p("foedus-tiny-pool");
  test::DbOptions o = small(kRows, 2);
  CappedDb db(p.str(), o, 8ull << 20, 24 << 10);
  db.load(100);
  uint64_t capacity = db.eng->stats()["volatile_pages"]["capacity"].get<uint64_t>();
  ASSERT_LT(capacity, 100u) << "167 leaves and 7 interior pages do not fit";
  db.eng->start();
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; t++)
    ts.emplace_back([&, t] {
      Mgr m(*db.eng, t);
      std::mt19937_64 r(uint64_t(t) + 11);
      for (int i = 0; i < 600; i++) {
        uint64_t a = r() % kRows, c = (a + 1 + r() % (kRows - 1)) % kRows;
        while (!test::transfer(m, a, c, 1)) std::this_thread::yield();
      }
    });
  for (auto& t : ts) t.join();
  db.eng->stop();
  auto s = db.eng->stats();
  EXPECT_LE(s["volatile_pages"]["in_use"].get<uint64_t>(), capacity);
  EXPECT_GT(s["gleaner"]["volatile_pages_dropped"].get<uint64_t>(), capacity) << s.dump();
  EXPECT_EQ(db.total(), int64_t(kRows) * 100);
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
}

// DRAM pressure asks the log writer for the next epoch instead of waiting for its tick: a page
// written in the running epoch can be dropped only once that epoch is durable, so with 5 s
// epochs a tiny pool would give one drop pass per two ticks (none in this test's window).
TEST(FoedusDram, PressureAdvancesTheEpochInsteadOfWaitingForItsTick) {
  constexpr uint64_t kRows = 1000;
  TempPath p("foedus-pressure-epoch");
  test::DbOptions o = small(kRows, 2);
  o.epoch_ms = 5000;
  o.gleaner_interval_ms = 60000;
  CappedDb db(p.str(), o, 8ull << 20, 24 << 10);
  db.load(100);
  const uint64_t capacity = db.eng->stats()["volatile_pages"]["capacity"].get<uint64_t>();
  db.eng->start();
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; t++)
    ts.emplace_back([&, t] {
      Mgr m(*db.eng, t);
      std::mt19937_64 r(uint64_t(t) + 5);
      while (!stop.load()) {
        uint64_t a = r() % kRows, c = (a + 1 + r() % (kRows - 1)) % kRows;
        test::transfer(m, a, c, 1);
      }
    });
  // Well under one 5 s tick: only epochs advanced on demand can make pages droppable.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until &&
         db.eng->stats()["gleaner"]["volatile_pages_dropped"].get<uint64_t>() <= 2 * capacity)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  for (auto& t : ts) t.join();
  db.eng->stop();
  auto s = db.eng->stats();
  EXPECT_GT(s["gleaner"]["volatile_pages_dropped"].get<uint64_t>(), 2 * capacity) << s.dump();
  EXPECT_GT(s["epochs"]["asked"].get<uint64_t>(), 0u) << s.dump();
  EXPECT_GT(s["volatile_pages"]["waits"].get<uint64_t>(), 0u) << s.dump();
  EXPECT_EQ(db.total(), int64_t(kRows) * 100);
}

// 7.7: a restart in a fresh engine truncates the logs at the durable epoch, gleans them into a
// snapshot and starts with no volatile page but the roots: every acknowledged commit is there,
// unacknowledged ones wholly or not at all; restarting twice gives the same state.
TEST(FoedusRestart, AcknowledgedCommitsSurviveAndRestartIsIdempotent) {
  TempPath p("foedus-restart");
  Db::Snapshot acked;
  {
    Db db(p.str(), small(1000, 2));
    db.load(100);
    db.eng->start();
    Mgr m(*db.eng, 0);
    for (int i = 0; i < 400; i++) ASSERT_TRUE(test::transfer(m, uint64_t(i * 7 % 1000), uint64_t(i * 11 + 3) % 1000, 2));
    db.eng->sync(db.eng->thread(0));  // acknowledged: their epoch is durable
    acked = db.snapshot();
    for (int i = 0; i < 30; i++) ASSERT_TRUE(test::transfer(m, uint64_t(i), uint64_t(i + 500), 1));
    db.eng->halt();  // power off: the last commits may or may not be durable
    test::drop_as_crash(db.eng);
  }
  Db::Snapshot first;
  for (int round = 0; round < 2; round++) {
    Db db(p.str(), small(1000, 2), true);
    RecoveryReport rep = db.eng->recover(2);
    EXPECT_EQ(rep.rows, 1000u);
    EXPECT_EQ(db.eng->volatile_pages(), 1u);
    EXPECT_EQ(db.total(), 100000);
    auto now = db.snapshot();
    for (uint64_t k = 0; k < 1000; k++) EXPECT_GE(now.versions[k], acked.versions[k]) << "key " << k;
    if (round == 0) first = now;
    else EXPECT_EQ(now.images, first.images);
    EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
    db.eng->stop();
    test::drop_as_crash(db.eng);
  }
}

// The ordered tree (tree_storage.h) on 512 B pages (5 records a leaf): inserts split leaves and
// interior pages, scans return every key in order, a scan whose range gets an insert committed
// before its own commit aborts (the node set) while one elsewhere commits; the gleaner's
// snapshot lets the volatile leaves go, and a restart rebuilds the same tree.
using TreeDb = test::PairDb<test::Pair<foedus::Foedus, cc::Foedus>>;
using TreeMgr = TreeDb::Mgr;
std::vector<TableInfo> tree_tables() { return {{0, "ordered", test::account_schema(), 5000, true}}; }

bool tree_insert(TreeMgr& m, uint64_t k, int64_t bal) {
  m.begin();
  char* p = m.insert(0, k);
  if (!p) {
    m.abort();
    return false;
  }
  test::set_balance(p, bal);
  return m.commit();
}
std::vector<uint64_t> tree_scan(TreeMgr& m, uint64_t lo, uint64_t hi, size_t limit = 10000, bool rev = false) {
  std::vector<uint64_t> keys;
  m.begin();
  EXPECT_TRUE(m.scan(0, lo, hi, limit, [&](uint64_t k, const char*) { keys.push_back(k); return true; }, rev));
  EXPECT_TRUE(m.commit());
  return keys;
}

TEST(FoedusTree, SplitsScansPhantomsSnapshotAndRestart) {
  TempPath p("foedus-tree");
  test::DbOptions o = small(0, 2);
  std::vector<uint64_t> all;
  {
    TreeDb db(p.str(), tree_tables(), "unit-test ordered", o);
    char img[test::kTuple];
    for (uint64_t k = 0; k < 400; k += 2) {
      test::initial_image(img, k, 100);
      db.eng->load(db.eng->thread(0), 0, k, img);
    }
    db.eng->after_load();
    TreeMgr a(*db.eng, 0), b(*db.eng, 1);
    for (uint64_t k = 1; k < 400; k += 2) ASSERT_TRUE(tree_insert(a, k, int64_t(k))) << k;
    EXPECT_FALSE(tree_insert(b, 7, 1)) << "a duplicate";
    EXPECT_EQ(b.cause(), AbortCause::WriteConflict);
    EXPECT_GT(db.eng->stats()["ordered_trees"]["ordered"]["splits"].get<uint64_t>(), 30u);
    for (uint64_t k = 0; k < 400; k++) all.push_back(k);
    EXPECT_EQ(tree_scan(a, 0, 1000), all);
    EXPECT_EQ(tree_scan(a, 0, 1000, 3, true), (std::vector<uint64_t>{399, 398, 397}));
    // A phantom: key 110 deleted, then inserted again while a scan of [100, 120] runs.
    b.begin();
    ASSERT_TRUE(b.remove(0, 110));
    ASSERT_TRUE(b.commit());
    a.begin();
    size_t seen = 0;
    ASSERT_TRUE(a.scan(0, 100, 120, 100, [&](uint64_t, const char*) { return ++seen, true; }));
    EXPECT_EQ(seen, 20u);
    ASSERT_TRUE(tree_insert(b, 110, 5));
    EXPECT_FALSE(a.commit()) << "the scan missed an insert committed before its commit";
    EXPECT_EQ(a.cause(), AbortCause::Validation);
    // A lookup that found no key is a phantom too; an insert far away disturbs neither.
    a.begin();
    EXPECT_EQ(a.read(0, 4000), nullptr);
    a.abort();
    a.begin();
    ASSERT_TRUE(a.scan(0, 100, 120, 100, [&](uint64_t, const char*) { return true; }));
    ASSERT_TRUE(tree_insert(b, 4000, 9));
    EXPECT_TRUE(a.commit()) << "an insert in another leaf is no phantom";
    all.push_back(4000);
    // The snapshot: after a gleaning nothing but the interior stays volatile.
    uint64_t before = db.eng->volatile_pages();
    db.eng->sync(db.eng->thread(1));
    ASSERT_TRUE(db.eng->glean_now());
    EXPECT_LT(db.eng->volatile_pages(), before / 4) << "the leaves were dropped";
    EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
    EXPECT_EQ(tree_scan(a, 0, 5000), all);
    char out[test::kTuple];
    uint64_t v;
    ASSERT_TRUE(db.eng->read_current(0, 110, out, v));
    EXPECT_EQ(test::balance_of(out), 5);
    a.begin();
    const char* r = a.read(0, 399);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(test::balance_of(r), 399);
    EXPECT_TRUE(a.commit());
    // Writes after the snapshot, then a crash: the restart gleans them from the log.
    for (uint64_t k = 1000; k < 1040; k++) ASSERT_TRUE(tree_insert(a, k, 7));
    for (uint64_t k = 1000; k < 1040; k++) all.push_back(k);
    std::sort(all.begin(), all.end());
    db.eng->sync(db.eng->thread(0));
    db.eng->halt();
    test::drop_as_crash(db.eng);
  }
  for (int round = 0; round < 2; round++) {
    TreeDb db(p.str(), tree_tables(), "unit-test ordered", o, true);
    RecoveryReport rep = db.eng->recover(2 + round);  // each level of the tree split 2 and 3 ways
    EXPECT_EQ(rep.rows, all.size()) << "the tree's rows, counted in its snapshot leaves";
    EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
    TreeMgr m(*db.eng, 0);
    EXPECT_EQ(tree_scan(m, 0, 5000), all) << "round " << round;
    char out[test::kTuple];
    uint64_t v;
    ASSERT_TRUE(db.eng->read_current(0, 1039, out, v));
    EXPECT_EQ(test::balance_of(out), 7);
    db.eng->stop();
    test::drop_as_crash(db.eng);
  }
}

// Serializable scans under concurrent inserts, deletes, splits and gleanings: writers insert
// and delete keys in pairs (k and k + 2000, one transaction), a reader counts both halves in one
// transaction; every committed count agrees, and so does the tree at the end.
TEST(FoedusTree, ConcurrentPairedInsertsAndDeletesScanWithoutPhantoms) {
  TempPath p("foedus-tree-pairs");
  TreeDb db(p.str(), tree_tables(), "unit-test ordered", small(0, 4));
  db.eng->after_load();  // empty
  db.eng->start();
  std::atomic<bool> done{false}, reading{false};
  std::atomic<int> bad{0}, scans{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; t++)
    ts.emplace_back([&, t] {
      TreeMgr m(*db.eng, t);
      while (!reading.load()) std::this_thread::yield();  // without a latch the writers are quick
      std::mt19937_64 r(uint64_t(t) + 7);
      for (int i = 0; i < 600; i++) {
        uint64_t k = r() % 2000;
        for (;;) {
          m.begin();
          bool del = m.read(0, k) != nullptr;
          bool ok = del ? m.remove(0, k) && m.remove(0, k + 2000) : m.insert(0, k) && m.insert(0, k + 2000);
          if (ok && m.commit()) break;
          if (!ok) m.abort();
          std::this_thread::yield();
        }
      }
    });
  ts.emplace_back([&] {
    TreeMgr m(*db.eng, 3);
    reading = true;
    while (!done.load()) {
      size_t lo = 0, hi = 0;
      m.begin();
      bool ok = m.scan(0, 0, 1999, 5000, [&](uint64_t, const char*) { return ++lo, true; }) &&
                m.scan(0, 2000, 3999, 5000, [&](uint64_t, const char*) { return ++hi, true; });
      if (!ok) {
        m.abort();
        continue;
      }
      if (m.commit()) {
        scans++;
        if (lo != hi) bad++;
      }
    }
  });
  for (int t = 0; t < 3; t++) ts[size_t(t)].join();
  done = true;
  ts[3].join();
  db.eng->stop();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(scans.load(), 0);
  TreeMgr m(*db.eng, 0);
  auto keys = tree_scan(m, 0, 5000);
  size_t lo = size_t(std::count_if(keys.begin(), keys.end(), [](uint64_t k) { return k < 2000; }));
  EXPECT_EQ(lo * 2, keys.size());
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
  EXPECT_GT(db.eng->stats()["ordered_trees"]["ordered"]["splits"].get<uint64_t>(), 10u);
}

// The tree without a latch: 4 writers insert, delete and reinsert keys of their own stripes
// (even keys; writer t has those with k / 2 % 4 == t) at 512 B pages, so leaves and interior
// pages split all the time, while 2 readers scan both ways and look keys up, with the gleaner
// dropping and the writers reinstalling leaves. Every scan (committed or not) returns keys in
// order, each once, only even ones; every writer finds its own committed keys; at the end the
// tree holds exactly the union of the writers' references.
TEST(FoedusTree, ConcurrentStripedInsertsDeletesAndScansMatchTheReference) {
  TempPath p("foedus-tree-stripes");
  TreeDb db(p.str(), tree_tables(), "unit-test ordered", small(0, 6));
  db.eng->after_load();  // empty
  db.eng->start();
  constexpr int kWriters = 4;
  constexpr uint64_t kKeys = 2400;  // keys 0..kKeys-1, the even ones inserted
  std::atomic<int> writers{kWriters}, readers{0}, bad_scans{0}, lost{0};
  std::atomic<uint64_t> scans{0};
  std::vector<std::vector<uint64_t>> ref(kWriters);
  auto retry = [](TreeMgr& m, auto&& body) {
    for (;;) {
      m.begin();
      int r = body();
      if (r < 0) {
        m.abort();
        std::this_thread::yield();
        continue;
      }
      if (m.commit()) return r == 1;
      std::this_thread::yield();
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < kWriters; t++)
    ts.emplace_back([&, t] {
      TreeMgr m(*db.eng, t);
      while (readers.load() < 2) std::this_thread::yield();  // the writers are quick
      std::vector<uint64_t> mine;
      for (uint64_t k = uint64_t(t) * 2; k < kKeys; k += 2 * kWriters) mine.push_back(k);
      std::shuffle(mine.begin(), mine.end(), std::mt19937_64(uint64_t(t) + 11));
      std::vector<bool> in(kKeys, false);
      for (size_t i = 0; i < mine.size(); i++) {
        uint64_t k = mine[i];
        // Insert (1: new), then check it is there; every third key is deleted again and every
        // ninth inserted once more (it claims its tombstone, or finds a fresh leaf after a split).
        retry(m, [&] { return m.insert(0, k) ? 1 : -1; });
        in[k] = true;
        if (!retry(m, [&] { return m.read(0, k) ? 1 : 0; })) lost++;
        if (i % 3 == 0) {
          retry(m, [&] { return m.remove(0, k) ? 1 : -1; });
          in[k] = false;
          if (i % 9 == 0) {
            retry(m, [&] { return m.insert(0, k) ? 1 : -1; });
            in[k] = true;
          }
        }
      }
      for (uint64_t k = 0; k < kKeys; k++)
        if (in[k]) ref[size_t(t)].push_back(k);
      writers--;
    });
  for (int r = 0; r < 2; r++)
    ts.emplace_back([&, r] {
      TreeMgr m(*db.eng, kWriters + r);
      std::mt19937_64 rng(uint64_t(r) + 3);
      readers++;
      for (bool rev = false; writers.load() > 0; rev = !rev) {
        uint64_t lo = rng() % kKeys, hi = lo + rng() % 200;
        std::vector<uint64_t> keys;
        m.begin();
        bool ok = m.scan(0, lo, hi, 10000, [&](uint64_t k, const char*) { return keys.push_back(k), true; }, rev);
        (void)m.read(0, rng() % kKeys);  // a lookup too, found or not
        for (size_t i = 0; i < keys.size(); i++)
          if (keys[i] % 2 || keys[i] < lo || keys[i] > hi ||
              (i > 0 && (rev ? keys[i] >= keys[i - 1] : keys[i] <= keys[i - 1])))
            bad_scans++;
        if (!ok) m.abort();
        else if (m.commit()) scans++;
      }
    });
  for (auto& th : ts) th.join();
  db.eng->stop();
  EXPECT_EQ(bad_scans.load(), 0) << "a scan returned keys out of order, twice or never inserted";
  EXPECT_EQ(lost.load(), 0) << "a writer did not find its own committed insert";
  EXPECT_GT(scans.load(), 0u);
  std::vector<uint64_t> all;
  for (auto& r : ref) all.insert(all.end(), r.begin(), r.end());
  std::sort(all.begin(), all.end());
  TreeMgr m(*db.eng, 0);
  EXPECT_EQ(tree_scan(m, 0, kKeys), all);
  std::vector<uint64_t> down(all.rbegin(), all.rend());
  EXPECT_EQ(tree_scan(m, 0, kKeys, 100000, true), down);
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
  EXPECT_GT(db.eng->stats()["ordered_trees"]["ordered"]["splits"].get<uint64_t>(), 100u);
}

// An image of another engine is refused by name.
TEST(FoedusImage, OtherEnginesImageRefused) {
  TempPath p("foedus-foreign");
  {
    test::TestDb<cc::Silo> m(p.str(), small(50, 1));
    m.load(1);
  }
  try {
    Db db(p.str(), small(50, 1), true);
    FAIL() << "an mmdb image opened as foedus";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("engine=mmdb"), std::string::npos) << e.what();
  }
}

}  // namespace
