// Power-failure simulation. A process kill keeps every store, so it cannot show that an engine
// flushes the right lines in the right order. In this mode the device keeps a second, persistent
// image apart from the working memory: under ADR it changes only when a thread fences lines it
// flushed (each line as it was when flushed); under eADR every store is persistent. At the crash
// each flushed but unfenced line may or may not have landed (1/2 each). Optionally,
// at the crash a random share of dirty, unflushed lines is written back early, as cache
// evictions can. At the crash point the persistent image replaces the image file and the
// process exits with kCrashExit, so a fresh process recovers from exactly what hardware could
// have left.
#pragma once
#include <atomic>
#include <functional>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

namespace nvt::dev {

constexpr int kCrashExit = 86;

// Protocol bugs that engines inject at their own persistence points, to prove the crash tests
// can fail: each must be caught by the torture command.
// EarlyRecord (WBL): the group commit's record claims commits whose versions are not yet fenced.
// SkipEpochFence (NVCaracal): the epoch number is persisted without the fence before it.
// WrongParity (NVCaracal): the pools' offsets go to the slot of the other epoch parity.
enum class Fault { None, DropFlush, DropFence, ReorderLP, EarlyRecord, SkipEpochFence, WrongParity };
Fault parse_fault(const std::string& s);  // throws std::invalid_argument
const char* fault_name(Fault f);

struct CrashSpec {
  enum Kind { Never, AfterFence, AtTime, AtPoint } kind = Never;
  uint64_t n = 0;         // fence number, milliseconds, or the point's n-th hit
  std::string point;      // named point, e.g. "mmdb.after_log_fence"
  double evict_prob = 0;  // share of dirty unflushed lines written back at the crash
  uint64_t seed = 1;
};
// "fence:N", "time:MS", "point:NAME" or "point:NAME:N". Throws std::invalid_argument.
CrashSpec parse_crash(const std::string& s);

class PowerFail {
 public:
  PowerFail(char* base, uint64_t size, const std::string& image_path, bool eadr, CrashSpec c);
  ~PowerFail();
  void on_flush(const void* p, size_t len);
  void on_fence();
  void on_point(const char* name);
  // A write the device itself makes durable at once (image header, region directory).
  void persist_now(const void* p, size_t len);
  [[noreturn]] void crash(const std::string& why);
  // Images kept in several files (node_images.h): at the crash the persistent content is
  // written into them by `f` instead of renaming the one shadow file over the image.
  void set_write_back(std::function<void(const char* shadow)> f) { write_back_ = std::move(f); }
  uint64_t fences() const { return fences_.load(); }

 private:
  char* base_;
  uint64_t size_;
  std::string path_, shadow_path_;
  std::function<void(const char*)> write_back_;
  char* shadow_ = nullptr;
  bool eadr_;
  CrashSpec spec_;
  std::atomic<uint64_t> fences_{0};
  std::atomic<uint64_t> point_hits_{0};
  std::shared_mutex mu_;  // fences apply lines shared; the crash takes it exclusively
  std::thread timer_;
  std::atomic<bool> stop_{false};
};

extern PowerFail* g_power_fail;
extern Fault g_fault;

inline bool fault_is(Fault f) { return g_fault == f; }
// A named crash point inside an engine's protocol.
inline void crash_point(const char* name) {
  if (g_power_fail) g_power_fail->on_point(name);
}

}  // namespace nvt::dev
