// Zen+'s MVCC-based adaptive execution for long-running transactions
// (papers/zen-plus-journal.txt section 4.1.2, Figure 6): the detecting stage's three conditions
// and G-EX, the global exclusive flag that guards the exclusive stage, with what they count.
//   Condition 1 (alpha): a read-write transaction accessed more tuples than alpha of its
//                        Met-Cache region: it becomes the privileged transaction.
//   Condition 2 (beta):  free NVM pages fell below beta of the page pool: the running
//                        transaction with the most accessed tuples becomes privileged.
//   Condition 3 (gamma): one transaction's accessed tuples over all its aborted attempts
//                        (wasted work) passed gamma: it becomes privileged.
// Plain Zen (zen-vldb21 section 3.3.4, rundb's default; `--zen-plus on` asks for Zen+) has only
// the exclusive mode: it enters the same stage when a Met-Cache region runs out of unpinned
// entries or a garbage queue grows long; those triggers are counted here too (met_cache, garbage).
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace nvt::zen {

// The paper's gamma (16 M tuples) is for its 256 GB database of 1 KB tuples (2^28 rows); an
// unset gamma is scaled to the database at hand, and never below kMinGamma.
constexpr uint64_t kPaperGamma = 16ull << 20;
constexpr uint64_t kPaperRows = 1ull << 28;
constexpr uint64_t kMinGamma = 1024;

enum class LrtCondition : int { Alpha = 0, Beta, Gamma, MetCache, Garbage, kCount };
inline const char* condition_name(LrtCondition c) {
  static const char* names[] = {"alpha", "beta", "gamma", "met_cache", "garbage"};
  return names[int(c)];
}

struct LrtSettings {
  bool adaptive = false;  // Zen+; false: plain Zen, only the exclusive mode's triggers
  double alpha = 0.95;   // share of a Met-Cache region
  double beta = 0.05;    // share of the NVM page pool
  uint64_t gamma = 0;    // tuples; 0 = kPaperGamma scaled by the database's rows
};

class Lrt {
 public:
  Lrt(const LrtSettings& s, uint64_t rows) : s_(s) {
    gamma_ = s.gamma ? s.gamma : std::max(kMinGamma, uint64_t(double(kPaperGamma) * double(rows) / double(kPaperRows)));
  }

  bool adaptive() const { return s_.adaptive; }
  bool over_alpha(uint64_t accessed, uint64_t region_entries) const {
    return double(accessed) > s_.alpha * double(region_entries);
  }
  bool under_beta(uint64_t pages_left, uint64_t pages) const {
    return double(pages_left) < s_.beta * double(pages);
  }
  bool over_gamma(uint64_t wasted) const { return wasted > gamma_; }

  // G-EX: the thread whose transaction is privileged, or -1.
  int holder() const { return gex_.load(std::memory_order_acquire); }
  // Lock G-EX for `tid` by compare-and-swap; false when another transaction holds it.
  bool take(int tid, LrtCondition why) {
    int none = -1;
    if (!gex_.compare_exchange_strong(none, tid, std::memory_order_seq_cst)) return none == tid;
    since_ns_.store(now_ns(), std::memory_order_relaxed);
    entries_[int(why)].fetch_add(1, std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
    return true;
  }
  // Unlock G-EX if `tid` holds it (its transaction ended).
  void release(int tid) {
    if (gex_.load(std::memory_order_acquire) != tid) return;
    exclusive_ns_.fetch_add(now_ns() - since_ns_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    gex_.store(-1, std::memory_order_seq_cst);
  }

  void wasted(uint64_t tuples) { wasted_.fetch_add(tuples, std::memory_order_relaxed); }
  void direct_read() { direct_reads_.fetch_add(1, std::memory_order_relaxed); }
  void direct_write() { direct_writes_.fetch_add(1, std::memory_order_relaxed); }
  void reclaimed(uint64_t n) { stage_reclaimed_.fetch_add(n, std::memory_order_relaxed); }
  void pages_freed(uint64_t n) { stage_pages_freed_.fetch_add(n, std::memory_order_relaxed); }

  // For the driver's timeline: stage entries so far, and whether the stage is on now.
  std::pair<uint64_t, bool> sample() const { return {epoch_.load(std::memory_order_acquire), holder() >= 0}; }

  // The driver's measured phase begins: stats() counts from here on (counters cover the
  // measured phase only; a stage on at this moment counts its time from here).
  void begin_measure() { base_ = counts(); }
  // The driver's measured phase ends: stats() stops counting here (a stage on at this moment
  // counts its time up to here; the privileged transaction may run on until the workers join).
  void end_measure() {
    end_ = counts();
    ended_ = true;
  }
  // Stage entries in the measured phase.
  uint64_t entries() const { return (ended_ ? end_.entries : epoch_.load()) - base_.entries; }

  nlohmann::json stats() const {
    Counts c = ended_ ? end_ : counts();
    nlohmann::json by;
    for (int i = 0; i < int(LrtCondition::kCount); i++) by[condition_name(LrtCondition(i))] = c.by[i] - base_.by[i];
    return {{"adaptive", s_.adaptive},
            {"alpha", s_.alpha},
            {"beta", s_.beta},
            {"gamma", gamma_},
            {"exclusive_entries", c.entries - base_.entries},
            {"entries_by_condition", by},
            {"exclusive_s", double(c.exclusive_ns - base_.exclusive_ns) / 1e9},
            {"wasted_tuples", c.wasted - base_.wasted},
            {"direct_nvm_reads", c.direct_reads - base_.direct_reads},
            {"direct_nvm_writes", c.direct_writes - base_.direct_writes},
            {"stage_reclaimed", c.reclaimed - base_.reclaimed},
            {"stage_pages_freed", c.pages_freed - base_.pages_freed}};
  }

 private:
  static uint64_t now_ns() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch()).count());
  }
  // Every counter at one moment (exclusive_ns with the running stage's time so far).
  struct Counts {
    uint64_t entries = 0, exclusive_ns = 0, wasted = 0, direct_reads = 0, direct_writes = 0;
    uint64_t reclaimed = 0, pages_freed = 0;
    uint64_t by[int(LrtCondition::kCount)]{};
  };
  Counts counts() const {
    Counts c{epoch_.load(), exclusive_ns_.load(), wasted_.load(), direct_reads_.load(), direct_writes_.load(),
             stage_reclaimed_.load(), stage_pages_freed_.load()};
    if (holder() >= 0) c.exclusive_ns += now_ns() - since_ns_.load(std::memory_order_relaxed);
    for (int i = 0; i < int(LrtCondition::kCount); i++) c.by[i] = entries_[i].load();
    return c;
  }

  LrtSettings s_;
  uint64_t gamma_ = 0;
  Counts base_;  // at the start of the measured phase (zero until then)
  Counts end_;   // at its end, once ended_
  bool ended_ = false;
  std::atomic<int> gex_{-1};
  std::atomic<uint64_t> since_ns_{0};  // when the holder took G-EX
  std::atomic<uint64_t> epoch_{0}, exclusive_ns_{0}, wasted_{0};
  std::atomic<uint64_t> direct_reads_{0}, direct_writes_{0}, stage_reclaimed_{0}, stage_pages_freed_{0};
  std::atomic<uint64_t> entries_[int(LrtCondition::kCount)]{};
};

}  // namespace nvt::zen
