#include "storage/device/power_fail.h"

#include <fcntl.h>
#include <libpmem.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace nvt::dev {

PowerFail* g_power_fail = nullptr;
Fault g_fault = Fault::None;

namespace {
constexpr uint64_t kLine = 64;
struct Pending {
  char* line;
  std::array<char, kLine> data;
};
// Each thread's flushed but not yet fenced lines, registered so that the crash can see them.
std::mutex g_registry_mu;
std::vector<std::vector<Pending>*> g_registry;
struct PendingList {
  std::vector<Pending> lines;
  PendingList() {
    std::lock_guard g(g_registry_mu);
    g_registry.push_back(&lines);
  }
  ~PendingList() {
    std::lock_guard g(g_registry_mu);
    std::erase(g_registry, &lines);
  }
};
thread_local PendingList t_pending_list;
}  // namespace

Fault parse_fault(const std::string& s) {
  if (s == "none") return Fault::None;
  if (s == "drop-flush") return Fault::DropFlush;
  if (s == "drop-fence") return Fault::DropFence;
  if (s == "reorder-lp") return Fault::ReorderLP;
  if (s == "early-record") return Fault::EarlyRecord;
  if (s == "skip-epoch-fence") return Fault::SkipEpochFence;
  if (s == "wrong-parity") return Fault::WrongParity;
  throw std::invalid_argument("unknown fault '" + s + "' (none, drop-flush, drop-fence, reorder-lp, early-record, skip-epoch-fence, wrong-parity)");
}

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::DropFlush: return "drop-flush";
    case Fault::DropFence: return "drop-fence";
    case Fault::ReorderLP: return "reorder-lp";
    case Fault::EarlyRecord: return "early-record";
    case Fault::SkipEpochFence: return "skip-epoch-fence";
    case Fault::WrongParity: return "wrong-parity";
    default: return "none";
  }
}

CrashSpec parse_crash(const std::string& s) {
  CrashSpec c;
  auto num = [&](const std::string& t) {
    size_t pos = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(t, &pos);
    } catch (...) {
      pos = 0;
    }
    if (pos != t.size() || t.empty() || t[0] == '-' || v == 0)
      throw std::invalid_argument("crash point '" + s + "': '" + t + "' is not a positive number");
    return uint64_t(v);
  };
  if (s == "none") return c;
  if (s.rfind("fence:", 0) == 0) {
    c.kind = CrashSpec::AfterFence;
    c.n = num(s.substr(6));
  } else if (s.rfind("time:", 0) == 0) {
    c.kind = CrashSpec::AtTime;
    c.n = num(s.substr(5));
  } else if (s.rfind("point:", 0) == 0) {
    c.kind = CrashSpec::AtPoint;
    std::string rest = s.substr(6);
    size_t colon = rest.find(':');
    c.point = rest.substr(0, colon);
    c.n = colon == std::string::npos ? 1 : num(rest.substr(colon + 1));
    if (c.point.empty()) throw std::invalid_argument("crash point '" + s + "' names no point");
  } else {
    throw std::invalid_argument("crash point '" + s +
                                "' is not none, fence:N, time:MS, point:NAME or point:NAME:N");
  }
  return c;
}

PowerFail::PowerFail(char* base, uint64_t size, const std::string& path, bool eadr, CrashSpec c)
    : base_(base), size_(size), path_(path), shadow_path_(path + ".persistent"), eadr_(eadr),
      spec_(std::move(c)) {
  // The persistent image starts as the file's durable content now.
  int fd = open(shadow_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, off_t(size)) != 0)
    throw std::runtime_error("power-failure mode: cannot create " + shadow_path_);
  void* m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) throw std::runtime_error("power-failure mode: cannot map " + shadow_path_);
  shadow_ = static_cast<char*>(m);
  memcpy(shadow_, base_, size_);
  if (spec_.kind == CrashSpec::AtTime)
    timer_ = std::thread([this] {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec_.n);
      while (!stop_.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!stop_.load()) crash("after " + std::to_string(spec_.n) + " ms");
    });
}

PowerFail::~PowerFail() {
  stop_ = true;
  if (timer_.joinable()) timer_.join();
  munmap(shadow_, size_);
  unlink(shadow_path_.c_str());
}

void PowerFail::on_flush(const void* p, size_t len) {
  if (eadr_ || len == 0) return;
  std::vector<Pending>& t_pending = t_pending_list.lines;
  std::shared_lock g(mu_);
  auto a = reinterpret_cast<uintptr_t>(p) & ~(kLine - 1);
  auto e = reinterpret_cast<uintptr_t>(p) + len;
  for (; a < e; a += kLine) {
    char* line = reinterpret_cast<char*>(a);
    if (line < base_ || line >= base_ + size_) continue;
    Pending& pd = t_pending.emplace_back();
    pd.line = line;
    memcpy(pd.data.data(), line, kLine);  // clwb writes back the line as it is now
  }
}

void PowerFail::on_fence() {
  {
    std::vector<Pending>& t_pending = t_pending_list.lines;
    std::shared_lock g(mu_);
    for (Pending& pd : t_pending) memcpy(shadow_ + (pd.line - base_), pd.data.data(), kLine);
    t_pending.clear();
  }
  uint64_t n = fences_.fetch_add(1) + 1;
  if (spec_.kind == CrashSpec::AfterFence && n == spec_.n) crash("after fence " + std::to_string(n));
}

void PowerFail::on_point(const char* name) {
  if (spec_.kind != CrashSpec::AtPoint || spec_.point != name) return;
  if (point_hits_.fetch_add(1) + 1 == spec_.n)
    crash(std::string("at point ") + name + " hit " + std::to_string(spec_.n));
}

void PowerFail::persist_now(const void* p, size_t len) {
  std::shared_lock g(mu_);
  auto off = static_cast<const char*>(p) - base_;
  memcpy(shadow_ + off, p, len);
}

void PowerFail::crash(const std::string& why) {
  mu_.lock();  // never released: the process ends here
  uint64_t evicted = 0, inflight = 0;
  std::mt19937_64 rng(spec_.seed);
  std::uniform_real_distribution<double> u(0, 1);
  // A line whose write-back was started (clwb) but not fenced may or may not have reached the
  // device, independently of its neighbours: each one lands with probability 1/2.
  {
    std::lock_guard g(g_registry_mu);
    for (auto* lines : g_registry)
      for (Pending& pd : *lines)
        if (u(rng) < 0.5) {
          memcpy(shadow_ + (pd.line - base_), pd.data.data(), kLine);
          inflight++;
        }
  }
  if (eadr_) {
    memcpy(shadow_, base_, size_);  // caches are in the persistence domain: every store counts
  } else if (spec_.evict_prob > 0) {
    for (uint64_t off = 0; off < size_; off += kLine)
      if (memcmp(shadow_ + off, base_ + off, kLine) != 0 && u(rng) < spec_.evict_prob) {
        memcpy(shadow_ + off, base_ + off, kLine);
        evicted++;
      }
  }
  msync(shadow_, size_, MS_SYNC);
  if (write_back_) {
    write_back_(shadow_);
    unlink(shadow_path_.c_str());
  } else if (rename(shadow_path_.c_str(), path_.c_str()) != 0) {
    perror("power-failure mode: rename");
    _exit(1);
  }
  fprintf(stderr,
          "rundb: simulated power failure %s (%lu fences; %lu flushed unfenced lines landed, "
          "%lu dirty lines evicted early)\n",
          why.c_str(), (unsigned long)fences_.load(), (unsigned long)inflight,
          (unsigned long)evicted);
  fflush(stderr);
  _exit(kCrashExit);
}

}  // namespace nvt::dev
