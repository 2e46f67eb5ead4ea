#include "storage/engines/foedus/gleaner.h"

#include <algorithm>
#include <chrono>
#include <atomic>
#include <barrier>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "storage/device/power_fail.h"
#include "storage/engine.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/log_buffer.h"
#include "storage/engines/foedus/metadata.h"
#include "storage/parallel.h"

namespace nvt::foedus {

namespace {

using clk = std::chrono::steady_clock;
double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

struct Entry {
  uint32_t tree;  // index: the array storages, then the ordered trees
  uint64_t key;
  uint64_t tid;
  const char* payload;
  bool del;  // ordered trees: a delete
};

struct KeyOf {
  uint32_t tree;
  uint64_t key;
  bool operator==(const KeyOf&) const = default;
};
struct KeyHash {
  size_t operator()(const KeyOf& k) const { return std::hash<uint64_t>()(k.key * 0x9E3779B97F4A7C15ull ^ k.tree); }
};

// The gleaner's DRAM working memory, charged to the ledger (overhead, foedus.gleaner_work) from
// when it is allocated until it is freed. A charge the budget cannot cover is not refused (the
// logs would fill and stop every writer) but counted apart and reported.
class WorkMemory {
 public:
  explicit WorkMemory(dev::DramBudget* b) : b_(b) {}
  ~WorkMemory() { release(charged_.load()); }
  static constexpr const char* kWhat = "foedus.gleaner_work";
  // Returns what was charged (give it back to release()).
  uint64_t take(uint64_t bytes) {
    uint64_t now = live_.fetch_add(bytes) + bytes;
    for (uint64_t p = peak_.load(); p < now && !peak_.compare_exchange_weak(p, now);) {
    }
    if (!b_ || !bytes) return 0;
    try {
      b_->charge(bytes, kWhat);
    } catch (const dev::BudgetError&) {
      unbudgeted_.fetch_add(bytes);
      return 0;
    }
    charged_.fetch_add(bytes);
    return bytes;
  }
  // `live`: what take() was asked for; `charged`: what it returned.
  void give(uint64_t live, uint64_t charged) {
    live_.fetch_sub(live);
    release(charged);
  }
  uint64_t peak() const { return peak_.load(); }
  uint64_t unbudgeted() const { return unbudgeted_.load(); }

 private:
  void release(uint64_t charged) {
    if (b_ && charged) {
      b_->uncharge(charged, kWhat);
      charged_.fetch_sub(charged);
    }
  }
  dev::DramBudget* b_;
  std::atomic<uint64_t> live_{0}, peak_{0}, charged_{0}, unbudgeted_{0};
};

// One allocation's worth of working memory: taken when sized, given back when freed.
struct WorkCharge {
  explicit WorkCharge(WorkMemory& m) : w(m) {}
  WorkCharge(const WorkCharge&) = delete;
  WorkCharge& operator=(const WorkCharge&) = delete;
  WorkMemory& w;
  uint64_t live = 0, charged = 0;
  void set(uint64_t bytes) {  // the allocation now holds `bytes`
    if (bytes > live) charged += w.take(bytes - live), live = bytes;
  }
  void clear() {
    w.give(live, charged);
    live = charged = 0;
  }
  ~WorkCharge() { clear(); }
};

template <class V>
uint64_t vector_bytes(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}
template <class M>
uint64_t map_bytes(const M& m) {  // libstdc++: a node (next, value, cached hash) per entry, the buckets
  return m.size() * (sizeof(void*) + sizeof(typename M::value_type) + sizeof(size_t)) + m.bucket_count() * sizeof(void*);
}

constexpr uint64_t kNone = ~0ull;
constexpr uint64_t kMinPiece = 64 << 10;  // a guess and a thread's turn cost microseconds: not for less
constexpr int kPiecesPerMapper = 4;       // pieces taken in turn even out the mappers' times

// A piece of one log's range [begin, end) (offsets from the range's start): the records that
// start in it, as one mapper parsed them. A cache line of its own: mappers parsing neighbouring
// pieces bump their counts and lists record by record.
struct alignas(64) Piece {
  Piece(size_t l, uint64_t b, uint64_t e) : log(l), begin(b), end(e) {}
  size_t log;
  uint64_t begin, end;
  uint64_t start = kNone;  // where parsing began (kNone: no guess found)
  uint64_t next = 0;       // where it ended: the first record boundary at or past `end`
  uint64_t stop = kNone;   // the first record above the epoch
  uint64_t torn = kNone;   // bytes that are no record of this image
  uint64_t records = 0;    // records at or below the epoch
  std::vector<Entry> entries;  // compacted per key
  std::vector<char> own;       // the record across the ring's end, copied out whole
  bool keep = false;       // before the log's first stop, on the log's chain
};

}  // namespace

uint64_t write_interiors(std::vector<SnapshotTree>& trees, SnapshotArea& area,
                         std::vector<std::vector<uint64_t>>& changed, uint64_t epoch, uint64_t snapshot_id,
                         int nthreads, const HelperTraffic& traffic) {
  const uint32_t ps = area.page_size();
  uint64_t written = 0;
  for (size_t ti = 0; ti < trees.size(); ti++) {
    SnapshotTree& t = trees[ti];
    std::vector<uint64_t> below = std::move(changed[ti]);
    for (int level = 1; level <= t.shape.root_level(); level++) {
      std::vector<uint64_t> here;
      for (uint64_t c : below) here.push_back(c / t.shape.g.fanout);
      std::sort(here.begin(), here.end());
      here.erase(std::unique(here.begin(), here.end()), here.end());
      page_runs(here.size(), nthreads, traffic, [&](size_t begin, size_t end) {
        std::vector<char> page(ps);
        Page* p = reinterpret_cast<Page*>(page.data());
        for (size_t k = begin; k < end; k++) {
          const uint64_t idx = here[k];
          memset(page.data(), 0, ps);
          p->hdr.storage = t.id;
          p->hdr.level = uint16_t(level);
          p->hdr.index = idx;
          p->hdr.snapshot_epoch = epoch;
          uint64_t n = t.shape.children(level, idx);
          for (uint64_t c = 0; c < n; c++)
            p->child(c)->snapshot_page.store(t.ptrs[size_t(level) - 1][idx * t.shape.g.fanout + c], std::memory_order_relaxed);
          uint64_t at = area.take();
          dev::nt_copy(area.page(at), page.data(), ps);
          if (t.ptrs[size_t(level)][idx]) area.retire(snapshot_index(t.ptrs[size_t(level)][idx]));
          t.ptrs[size_t(level)][idx] = make_snapshot_ptr(snapshot_id, at);
        }
      });
      written += here.size();
      below = std::move(here);
    }
  }
  dev::fence();
  return written;
}

GleanResult glean(std::vector<SnapshotTree>& trees, std::vector<TreeSnapshot>& ordered, SnapshotArea& area,
                  const std::vector<LogRange>& logs, uint64_t epoch, uint64_t snapshot_id, int mappers, int reducers,
                  dev::DramBudget* dram) {
  auto t0 = clk::now();  // the map stage's time includes this set-up
  const double cpu0 = process_cpu_s();
  GleanResult res;
  mappers = std::max(1, mappers);
  reducers = std::max(1, reducers);
  WorkMemory work(dram);
  res.stop.resize(logs.size());
  res.torn.assign(logs.size(), 0);
  std::mutex mu;
  const HelperTraffic helpers = [&](const dev::Counters& d) {
    std::lock_guard g(mu);
    res.device += d;
  };
  auto account = [&](const dev::Counters& c0) { helpers(dev::my_counters() - c0); };
  // Storage id -> index: arrays first [0, na), then ordered trees [na, na + nt).
  const uint32_t na = uint32_t(trees.size());
  std::vector<int> index_of(kMaxStorages, -1);
  for (size_t i = 0; i < trees.size(); i++) index_of.at(trees[i].id) = int(i);
  for (size_t i = 0; i < ordered.size(); i++) index_of.at(ordered[i].id) = int(na + i);
  // A record's size for its storage (0: no storage of this image).
  auto size_of = [&](uint32_t storage) -> uint32_t {
    int t = storage < kMaxStorages ? index_of[storage] : -1;
    if (t < 0) return 0;
    return LogRecord::size_for(uint32_t(t) < na ? trees[size_t(t)].shape.g.len : ordered[size_t(t) - na].g.len);
  };
  // The intact record of this image at offset `off` of `l`'s range (`len` bytes), or null; one
  // across the ring's end is copied out whole into `scratch`.
  auto record_at = [&](const LogRange& l, uint64_t off, uint64_t len, std::vector<char>& scratch) -> const LogRecord* {
    auto view = [&](uint64_t need) -> const char* {
      uint64_t at = (l.from + off) % l.cap;
      if (at + need <= l.cap) return l.base + at;
      scratch.resize(need);
      for (uint64_t k = 0; k < need;) {
        uint64_t a = (l.from + off + k) % l.cap, n = std::min(need - k, l.cap - a);
        memcpy(scratch.data() + k, l.base + a, n);
        k += n;
      }
      return scratch.data();
    };
    if (off + sizeof(LogRecord) > len) return nullptr;
    const auto* r = reinterpret_cast<const LogRecord*>(view(sizeof(LogRecord)));
    const uint32_t bytes = size_of(r->storage & ~LogRecord::kDelete);
    if (!bytes || r->bytes != bytes || off + bytes > len) return nullptr;
    r = reinterpret_cast<const LogRecord*>(view(bytes));
    return r->intact() ? r : nullptr;
  };
  // An ordered tree's record goes to the previous snapshot's leaf that holds its key.
  auto tree_leaf = [&](uint32_t ti, uint64_t key) {
    const auto& ls = ordered[ti - na].leaves;
    auto it = std::upper_bound(ls.begin(), ls.end(), key, [](uint64_t k, const TreeLeaf& l) { return k < l.low; });
    return uint64_t(it - ls.begin()) - 1;
  };
  auto leaf_of = [&](const Entry& e) {
    return e.tree < na ? trees[e.tree].shape.leaf_of(e.key) : tree_leaf(e.tree, e.key);
  };

  // Mappers: read, filter by epoch, compact per key, partition by (storage, leaf) among reducers.
  // 7.2 gives each log its mapper; here each log's range is cut into pieces that any mapper
  // takes, so that a log holding nearly all of the tail (or fewer logs than mappers) still maps
  // on every thread. Every piece but a log's first starts at a guess: the first offset that holds an
  // intact record. The chain of pieces from the log's start then checks every guess (a piece
  // must start where the one before it ended) and parses a piece guessed wrong again, so the
  // records taken are exactly those a single pass over the log takes.
  uint64_t total = 0;
  for (const LogRange& l : logs) total += l.to > l.from ? l.to - l.from : 0;
  const uint64_t piece_bytes =
      mappers <= 1 ? ~0ull : std::max<uint64_t>(kMinPiece, (total / uint64_t(mappers * kPiecesPerMapper) + 7) / 8 * 8);
  std::vector<Piece> pieces;
  std::vector<size_t> first_piece(logs.size() + 1);
  for (size_t i = 0; i < logs.size(); i++) {
    first_piece[i] = pieces.size();
    const uint64_t len = logs[i].to > logs[i].from ? logs[i].to - logs[i].from : 0;
    for (uint64_t b = 0; b < len; b += std::min(piece_bytes, len - b)) pieces.emplace_back(i, b, b + std::min(piece_bytes, len - b));
  }
  first_piece[logs.size()] = pieces.size();
  std::vector<std::vector<std::vector<Entry>>> buckets(static_cast<size_t>(mappers), std::vector<std::vector<Entry>>(static_cast<size_t>(reducers)));
  std::vector<std::unique_ptr<WorkCharge>> piece_mem, bucket_mem;
  for (int m = 0; m < mappers; m++) {
    piece_mem.push_back(std::make_unique<WorkCharge>(work));
    bucket_mem.push_back(std::make_unique<WorkCharge>(work));
  }
  WorkCharge reparsed_mem(work);
  std::vector<uint64_t> piece_held(size_t(mappers), 0);
  // Parse piece `p` from `at` (an offset of its log's range): its records that start before its
  // end, compacted per key (7.3: the last write wins), up to the first record above the epoch.
  auto parse = [&](Piece& p, uint64_t at, std::unordered_map<KeyOf, size_t, KeyHash>& last, std::vector<char>& scratch) {
    const LogRange& l = logs[p.log];
    const uint64_t len = l.to - l.from;
    p.start = at;
    p.stop = p.torn = kNone;
    p.records = 0;
    p.entries.clear();
    p.own.clear();
    last.clear();
    for (uint64_t from = l.from + at; from < l.from + p.end;) {  // charged as the copy into DRAM was
      uint64_t a = from % l.cap, n = std::min(l.from + p.end - from, l.cap - a);
      dev::read(l.base + a, n);
      from += n;
    }
    uint64_t off = at;
    while (off < p.end) {
      const LogRecord* r = record_at(l, off, len, scratch);
      if (!r) {
        p.torn = off;  // within the durable range, yet no record of this image
        break;
      }
      if (reinterpret_cast<const char*>(r) == scratch.data()) {  // the one record across the ring's end
        p.own.assign(scratch.begin(), scratch.begin() + r->bytes);  // its entry points here from now on
        r = reinterpret_cast<const LogRecord*>(p.own.data());
      }
      if (p.stop != kNone || epoch_of(r->tid) > epoch) {
        if (p.stop == kNone) p.stop = off;
        if (!l.verify) break;
        off += r->bytes;  // a restart checks the rest of the durable range too
        continue;
      }
      int t = index_of[r->storage & ~LogRecord::kDelete];
      if (uint32_t(t) >= na || r->key < trees[size_t(t)].shape.capacity) {
        p.records++;
        auto [it, fresh] = last.try_emplace(KeyOf{uint32_t(t), r->key}, p.entries.size());
        Entry e{uint32_t(t), r->key, r->tid, r->payload(), (r->storage & LogRecord::kDelete) != 0};
        if (fresh) p.entries.push_back(e);
        else if (p.entries[it->second].tid < r->tid) p.entries[it->second] = e;
      }
      off += r->bytes;
    }
    p.next = off;
  };
  // Walk each log's chain of pieces: parse again a piece that did not start where the one before
  // it ended; keep the pieces up to the log's first stop; stop the chain at a torn record (or at
  // the first record above the epoch when the rest needs no check).
  auto chain = [&] {
    std::unordered_map<KeyOf, size_t, KeyHash> last;
    std::vector<char> scratch;
    uint64_t held = 0;
    for (size_t i = 0; i < logs.size(); i++) {
      uint64_t cur = 0, stop = kNone;
      bool ended = false;
      res.stop[i] = logs[i].from;
      for (size_t k = first_piece[i]; k < first_piece[i + 1]; k++) {
        Piece& p = pieces[k];
        p.keep = false;
        if (ended || cur >= p.end) continue;  // no record of the log starts in it
        if (p.start != cur) {
          res.pieces_parsed_again++;
          parse(p, cur, last, scratch);
          held += vector_bytes(p.entries);
          reparsed_mem.set(held + map_bytes(last) + vector_bytes(scratch));
        }
        p.keep = stop == kNone;
        if (p.stop != kNone && stop == kNone) stop = p.stop;
        if (p.torn != kNone) {
          res.torn[i] = 1;
          if (stop == kNone) stop = p.torn;
          ended = true;
        } else if (p.stop != kNone && !logs[i].verify) {
          ended = true;
        }
        cur = p.next;
      }
      if (stop == kNone) stop = cur;
      res.stop[i] = logs[i].from + stop;
      res.log_bytes += stop;
    }
  };
  std::atomic<size_t> next_parse{0}, next_split{0};
  std::barrier sync(mappers, [&]() noexcept { chain(); });
  parallel(mappers, [&](int m) {
    dev::Counters c0 = dev::my_counters();
    {
      std::unordered_map<KeyOf, size_t, KeyHash> last;
      std::vector<char> scratch;  // a record across the ring's end, copied out whole
      for (size_t k; (k = next_parse.fetch_add(1)) < pieces.size();) {
        Piece& p = pieces[k];
        const LogRange& l = logs[p.log];
        uint64_t at = p.begin;
        if (k != first_piece[p.log])  // a guess: the first intact record (none: the chain decides)
          for (at = p.begin; at < p.end && !record_at(l, at, l.to - l.from, scratch); at += 8) {
          }
        if (at < p.end) parse(p, at, last, scratch);
        piece_held[size_t(m)] += vector_bytes(p.entries);
        piece_mem[size_t(m)]->set(piece_held[size_t(m)] + map_bytes(last) + vector_bytes(scratch));
      }
    }
    sync.arrive_and_wait();  // chain() ran: pieces[k].keep says which to partition
    auto& mb = buckets[size_t(m)];
    for (size_t k; (k = next_split.fetch_add(1)) < pieces.size();) {
      if (!pieces[k].keep) continue;
      for (const Entry& e : pieces[k].entries)
        mb[((leaf_of(e) ^ uint64_t(e.tree) << 40) * 0x9E3779B97F4A7C15ull >> 17) % uint64_t(reducers)].push_back(e);
      pieces[k].entries = {};  // `own` stays: an entry may point into it
    }
    uint64_t held = 0;
    for (auto& b : mb) held += vector_bytes(b);
    bucket_mem[size_t(m)]->set(held);  // until the reducers are done with them
    account(c0);
  });
  for (const Piece& p : pieces) res.records += p.keep ? p.records : 0;
  res.pieces = pieces.size();
  piece_mem.clear();
  reparsed_mem.clear();
  for (auto& mb : buckets)
    for (auto& b : mb) res.reducer_input += b.size();
  res.map_s = since(t0);
  const double cpu1 = process_cpu_s();
  res.map_cpu_s = cpu1 - cpu0;

  // Reducers: sort, compact across mappers, merge onto the previous snapshot's leaves.
  auto t1 = clk::now();
  const uint32_t ps = area.page_size();
  struct Change {
    uint32_t tree;
    uint64_t leaf;
    SnapshotPtr ptr;
  };
  struct TreeChange {
    uint32_t tree;  // index into `ordered`
    uint64_t leaf;
    LeafList pieces;
  };
  std::vector<std::vector<Change>> changes(static_cast<size_t>(reducers));
  std::vector<std::vector<TreeChange>> tree_changes(static_cast<size_t>(reducers));
  std::vector<uint64_t> applied(size_t(reducers), 0), tree_pages(size_t(reducers), 0);
  parallel(reducers, [&](int r) {
    dev::Counters c0 = dev::my_counters();
    // The reducer's lists and counts in locals, put in its slots at the end: neighbouring
    // reducers' slots share cache lines, which bumping them in place would bounce.
    std::vector<Change> my_changes;
    std::vector<TreeChange> my_tree_changes;
    uint64_t my_applied = 0, my_tree_pages = 0;
    std::vector<Entry> all;
    size_t n = 0;
    for (int m = 0; m < mappers; m++) n += buckets[size_t(m)][size_t(r)].size();
    all.reserve(n);
    for (int m = 0; m < mappers; m++) {
      auto& b = buckets[size_t(m)][size_t(r)];
      all.insert(all.end(), b.begin(), b.end());
    }
    WorkCharge mem(work);
    mem.set(vector_bytes(all) + 2 * ps);
    std::sort(all.begin(), all.end(), [](const Entry& x, const Entry& y) {
      return x.tree != y.tree ? x.tree < y.tree : x.key != y.key ? x.key < y.key : x.tid < y.tid;
    });
    std::vector<char> page(ps);
    Page* p = reinterpret_cast<Page*>(page.data());
    std::vector<TreeUpdate> upd;
    std::vector<TreeRecord> merged;
    bool first = true;
    size_t i = 0;
    while (i < all.size()) {
      const uint32_t ti = all[i].tree;
      if (ti >= na) {  // an ordered tree's leaf
        TreeSnapshot& t = ordered[ti - na];
        uint64_t leaf = tree_leaf(ti, all[i].key);
        upd.clear();
        for (; i < all.size() && all[i].tree == ti && all[i].key < t.leaves[leaf].high; i++) {
          if (i + 1 < all.size() && all[i + 1].tree == ti && all[i + 1].key == all[i].key) continue;
          upd.push_back({all[i].key, all[i].tid, all[i].payload, all[i].del});
        }
        const Page* old = area.page(snapshot_index(t.leaves[leaf].ptr));
        dev::read(old, ps);  // merge onto the previous snapshot page
        my_applied += merge_tree_leaf(t, old, upd, merged);
        mem.set(vector_bytes(all) + 2 * ps + vector_bytes(upd) + vector_bytes(merged));
        TreeChange c{ti - na, leaf, {}};
        my_tree_pages += write_tree_leaves(t, area, t.leaves[leaf].low, t.leaves[leaf].high, merged, t.bounds, epoch,
                                           snapshot_id, c.pieces);
        my_tree_changes.push_back(std::move(c));
        if (r == 0 && first) dev::crash_point("foedus.gleaner_mid_write");
        first = false;
        continue;
      }
      SnapshotTree& t = trees[ti];
      const Geometry& g = t.shape.g;
      uint64_t leaf = t.shape.leaf_of(all[i].key);
      SnapshotPtr old = t.ptrs[0][leaf];
      if (old) {
        const Page* src = area.page(snapshot_index(old));
        dev::read(src, ps);  // merge onto the previous snapshot page
        memcpy(page.data(), src, ps);
      } else {
        memset(page.data(), 0, ps);
      }
      p->hdr.storage = t.id;
      p->hdr.level = 0;
      p->hdr.index = leaf;
      p->hdr.snapshot_epoch = epoch;
      for (; i < all.size() && all[i].tree == ti && t.shape.leaf_of(all[i].key) == leaf; i++) {
        if (i + 1 < all.size() && all[i + 1].tree == all[i].tree && all[i + 1].key == all[i].key) continue;
        uint64_t s = t.shape.slot_in_leaf(all[i].key);
        uint64_t tid = all[i].tid & kTidBits;
        // The page may already hold this write or a later one (a restart gleaning logs again):
        // applying is idempotent.
        if (old && p->tid(s, g.slot)->load(std::memory_order_relaxed) >= tid) continue;
        p->tid(s, g.slot)->store(tid, std::memory_order_relaxed);
        memcpy(p->payload(s, g.slot), all[i].payload, g.len);
        my_applied++;
      }
      uint64_t idx = area.take();
      dev::nt_copy(area.page(idx), page.data(), ps);
      my_changes.push_back({ti, leaf, make_snapshot_ptr(snapshot_id, idx)});
      if (r == 0 && first) dev::crash_point("foedus.gleaner_mid_write");
      first = false;
    }
    // Injected bug: the snapshot metadata may then name pages that never reached NVM.
    if (!dev::fault_is(dev::Fault::EarlyRecord)) dev::fence();
    changes[size_t(r)] = std::move(my_changes);
    tree_changes[size_t(r)] = std::move(my_tree_changes);
    applied[size_t(r)] = my_applied, tree_pages[size_t(r)] = my_tree_pages;
    account(c0);
  });
  for (int r = 0; r < reducers; r++) {
    res.applied += applied[size_t(r)];
    res.pages_written += changes[size_t(r)].size() + tree_pages[size_t(r)];
  }
  res.reduce_s = since(t1);
  const double cpu2 = process_cpu_s();
  res.reduce_cpu_s = cpu2 - cpu1;
  // The partitions' entries point into the logs (and the pieces' copies) and are done with: free them.
  buckets = {};
  bucket_mem.clear();
  pieces = {};

  // Interior pages above the changed leaves, level by level, a level's pages on the reducers' threads.
  auto t2 = clk::now();
  dev::Counters c0 = dev::my_counters();
  std::vector<std::vector<uint64_t>> changed(trees.size());
  for (auto& cs : changes)
    for (const Change& c : cs) {
      SnapshotTree& t = trees[c.tree];
      if (t.ptrs[0][c.leaf]) area.retire(snapshot_index(t.ptrs[0][c.leaf]));
      t.ptrs[0][c.leaf] = c.ptr;
      changed[c.tree].push_back(c.leaf);
    }
  res.pages_written += write_interiors(trees, area, changed, epoch, snapshot_id, reducers, helpers);  // fences
  // Ordered trees: each changed leaf gives way to its pieces, then the interior pages anew.
  std::vector<std::vector<TreeChange*>> by_tree(ordered.size());
  for (auto& cs : tree_changes)
    for (TreeChange& c : cs) by_tree[c.tree].push_back(&c);
  bool any = false;
  for (size_t ti = 0; ti < ordered.size(); ti++) {
    if (by_tree[ti].empty()) continue;
    TreeSnapshot& t = ordered[ti];
    std::sort(by_tree[ti].begin(), by_tree[ti].end(), [](const TreeChange* x, const TreeChange* y) { return x->leaf < y->leaf; });
    std::vector<std::pair<uint64_t, const LeafList*>> spliced;  // as long as the log tail
    for (const TreeChange* c : by_tree[ti]) {
      area.retire(snapshot_index(t.leaves[c->leaf].ptr));
      spliced.push_back({c->leaf, &c->pieces});
    }
    splice_tree_leaves(t, spliced, reducers);
    res.pages_written += write_tree_interiors(t, area, epoch, snapshot_id, reducers, helpers);
    any = true;
  }
  if (any) dev::fence();
  account(c0);
  res.bytes_written = res.pages_written * ps;
  res.interior_s = since(t2);
  res.interior_cpu_s = process_cpu_s() - cpu2;
  res.work_peak_bytes = work.peak();
  res.work_unbudgeted_bytes = work.unbudgeted();
  return res;
}

}  // namespace nvt::foedus
