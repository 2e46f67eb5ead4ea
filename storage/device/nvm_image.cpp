#include "storage/device/nvm_image.h"

#include <fcntl.h>
#include <libpmem.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "storage/device/device.h"

namespace nvt::dev {

namespace {

constexpr char kMagic[8] = {'N', 'V', 'T', 'B', 'I', 'M', 'G', '1'};
constexpr int kMaxRegions = 64;
constexpr uint64_t kHeaderBytes = 64 * 1024;
constexpr uint64_t kRegionAlign = 2 * 1024 * 1024;  // 2 MB, as Zen's NVM pages

struct RegionEntry {
  char name[48];
  uint64_t offset;
  uint64_t size;
  uint32_t kind;
  uint32_t pad;
};

struct ImageHeader {
  char magic[8];
  uint32_t layout_version;
  uint32_t nregions;
  uint64_t image_size;
  uint64_t next_free;
  char layout[1024];
  RegionEntry regions[kMaxRegions];
  char settings[4096];
};
static_assert(sizeof(ImageHeader) <= kHeaderBytes);

ImageHeader* header(char* base) { return reinterpret_cast<ImageHeader*>(base); }

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

uint64_t parse_size(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    throw std::invalid_argument("'" + text + "' is not a size (e.g. 4096, 512M, 2G)");
  }
  std::string suf = text.substr(pos);
  double mult = 1;
  if (suf == "" || suf == "B") mult = 1;
  else if (suf == "K" || suf == "KB" || suf == "KiB") mult = 1024.0;
  else if (suf == "M" || suf == "MB" || suf == "MiB") mult = 1024.0 * 1024;
  else if (suf == "G" || suf == "GB" || suf == "GiB") mult = 1024.0 * 1024 * 1024;
  else if (suf == "T" || suf == "TB" || suf == "TiB") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw std::invalid_argument("'" + text + "' has an unknown size suffix (B, K, M, G, T)");
  if (!(v > 0) || !std::isfinite(v) || v * mult > 1e15)
    throw std::invalid_argument("'" + text + "' is not a positive size below 1 PB");
  return uint64_t(v * mult);
}

std::string read_image_settings(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  auto h = std::make_unique<ImageHeader>();
  ssize_t n = pread(fd, h.get(), sizeof *h, 0);
  close(fd);
  if (n != ssize_t(sizeof *h) || memcmp(h->magic, kMagic, sizeof kMagic) != 0 ||
      h->layout_version != NvmImage::kLayoutVersion)
    return {};
  return std::string(h->settings, strnlen(h->settings, sizeof h->settings));
}

std::string format_size(uint64_t b) {
  const char* s[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int i = 0;
  while (v >= 1024 && i < 4) { v /= 1024; i++; }
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f %s", v, s[i]);
  return buf;
}

namespace {
// MemAvailable from /proc/meminfo in bytes (0 where it cannot be read: no check then).
uint64_t memory_available() {
  std::ifstream f("/proc/meminfo");
  unsigned long long kib = 0;
  for (std::string line; std::getline(f, line);)
    if (sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) return uint64_t(kib) << 10;
  return 0;
}

std::string dir_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}
}  // namespace

Room room_at(const std::string& path) {
  const std::string dir = dir_of(path);
  struct statfs fs {};
  struct stat st {};
  if (statfs(dir.c_str(), &fs) != 0 || stat(dir.c_str(), &st) != 0) return {UINT64_MAX, 0, false};
  constexpr decltype(fs.f_type) kTmpfsMagic = 0x01021994;  // TMPFS_MAGIC
  return {uint64_t(fs.f_bavail) * uint64_t(fs.f_bsize), uint64_t(st.st_dev), fs.f_type == kTmpfsMagic};
}

void check_room(const std::string& path, uint64_t bytes) {
  const Room r = room_at(path);  // unreadable: creating the file will say what is wrong
  const std::string dir = dir_of(path);
  const std::string what = "cannot create NVM image " + path + " of " + format_size(bytes);
  if (bytes > r.free)
    throw DeviceError(what + ": its file system (" + dir + ") has " + format_size(r.free) + " free");
  const uint64_t avail = r.tmpfs ? memory_available() : 0;
  if (avail > 0 && bytes > avail)
    throw DeviceError(what + ": " + dir + " is tmpfs, so the image would live in memory, and the host has " +
                      format_size(avail) + " available (use a smaller database or another --nvm-path)");
}

ImageLock::ImageLock(const std::string& image_path) : path_(image_path + ".lock") {
  for (;;) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0)
      throw DeviceError("cannot open the lock file " + path_ + " of NVM image " + image_path + ": " +
                        strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      char buf[32] = {};
      ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
      close(fd_);
      fd_ = -1;
      if (err != EWOULDBLOCK)
        throw DeviceError("cannot lock " + path_ + ": " + strerror(err));
      std::string pid = n > 0 ? std::string(buf, strcspn(buf, "\n")) : "";
      throw DeviceError("NVM image " + image_path + " is in use by another process (pid " +
                        (pid.empty() ? "unknown" : pid) + ", holding " + path_ +
                        "); left untouched: wait for that process to end or pass another --nvm-path");
    }
    // A holder that was closing may have unlinked the file between our open and flock: then
    // the lock we hold is on a dead inode, and a newcomer could lock a fresh file. Retry.
    struct stat held {}, now {};
    if (fstat(fd_, &held) == 0 && stat(path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev)
      break;
    close(fd_);
  }
  std::string pid = std::to_string(getpid()) + "\n";  // for the message a second process gives
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    // The lock holds without the pid; only the refusal message loses it.
  }
}

ImageLock::~ImageLock() {
  if (fd_ < 0) return;
  unlink(path_.c_str());  // while still locked: a waiter that opened it retries (see above)
  close(fd_);
}

NvmImage::NvmImage(const DeviceOptions& o)
    : path_(o.node_paths.empty() ? o.path : o.node_paths[0]), profile_(o.profile), writers_(o.writer_threads) {
  if (o.numa_nodes < 1) throw DeviceError("numa nodes must be >= 1");
  if (o.layout.size() >= sizeof(ImageHeader::layout))
    throw DeviceError("layout description too long");
  if (o.settings.size() >= sizeof(ImageHeader::settings))
    throw DeviceError("settings too long for the image header");
  if (o.node_paths.size() > 1) nodes_paths_ = o.node_paths;
  if (!nodes_paths_.empty() && int(nodes_paths_.size()) != o.numa_nodes)
    throw DeviceError(std::to_string(nodes_paths_.size()) + " NVM image files for " + std::to_string(o.numa_nodes) + " NUMA nodes");
  for (const std::string& p : paths()) locks_.push_back(std::make_unique<ImageLock>(p));
  size_t mapped = 0;
  int pm = 0;
  // Throws, unmapping a single file first (per-node files unmap with nodes_).
  auto fail = [&](const std::string& why) {
    if (!nodes_) pmem_unmap(base_, size_);
    throw DeviceError(why);
  };
  if (nodes_paths_.size() > 1) {
    if (!o.reopen && o.size < kHeaderBytes + kRegionAlign)
      throw DeviceError("--nvm-size " + std::to_string(o.size) + " is too small");
    nodes_ = std::make_unique<NodeImages>(nodes_paths_, o.size, o.reopen, o.placement);
    base_ = nodes_->base();
    size_ = nodes_->size();
    pm = nodes_->is_pmem();
  } else if (o.reopen) {
    struct stat st {};
    if (stat(path_.c_str(), &st) != 0)
      throw DeviceError("no NVM image at --nvm-path " + path_ + ": " + strerror(errno));
    if (uint64_t(st.st_size) < kHeaderBytes)
      throw DeviceError("NVM image " + path_ + " is truncated (" + std::to_string(st.st_size) +
                        " bytes, smaller than its header)");
    void* p = pmem_map_file(path_.c_str(), 0, 0, 0, &mapped, &pm);
    if (!p) throw DeviceError("cannot map NVM image " + path_ + ": " + pmem_errormsg());
    base_ = static_cast<char*>(p);
    size_ = mapped;
    if (memcmp(base_, "NVTBNODE", 8) == 0)
      fail("file " + path_ + " is one NUMA node's file of a per-node NVM image: pass every node's file in --nvm-path (a list or a {node} pattern)");
  } else {
    if (o.size < kHeaderBytes + kRegionAlign)
      throw DeviceError("--nvm-size " + std::to_string(o.size) + " is too small");
    // Build the new image beside any existing one, which stays intact (and recoverable) until
    // publish(): a run that fails to set up loses nothing.
    creating_ = path_ + ".new";
    unlink(creating_.c_str());
    check_room(path_, o.size);
    void* p = pmem_map_file(creating_.c_str(), o.size, PMEM_FILE_CREATE, 0600, &mapped, &pm);
    if (!p) {
      std::string why = pmem_errormsg();
      unlink(creating_.c_str());  // the destructor does not run for a throwing constructor
      throw DeviceError("cannot create NVM image " + path_ + " of " + format_size(o.size) +
                        ": " + why);
    }
    base_ = static_cast<char*>(p);
    size_ = mapped;
  }
  if (o.reopen) {
    ImageHeader* h = header(base_);
    if (memcmp(h->magic, kMagic, sizeof kMagic) != 0)
      fail("file " + path_ + " is not an nvtestbed NVM image (bad magic)");
    if (h->layout_version != kLayoutVersion)
      fail("NVM image " + path_ + " has layout version " + std::to_string(h->layout_version) +
           ", this build reads version " + std::to_string(kLayoutVersion));
    if (h->image_size != size_)
      fail("NVM image " + path_ + " is " + std::to_string(size_) + " bytes but its header says " +
           std::to_string(h->image_size) + " (truncated or corrupted)");
    std::string layout(h->layout, strnlen(h->layout, sizeof h->layout));
    if (layout != o.layout)
      fail("NVM image " + path_ + " holds another layout:\n  image: " + layout + "\n  this run: " + o.layout);
    if (h->nregions > kMaxRegions || h->next_free > size_)
      fail("NVM image " + path_ + " has a corrupted region directory");
    reopened_ = true;
  } else {
    ImageHeader* h = header(base_);
    memset(h, 0, sizeof *h);
    h->layout_version = kLayoutVersion;
    h->image_size = size_;
    h->next_free = kHeaderBytes;
    memcpy(h->layout, o.layout.data(), o.layout.size());
    memcpy(h->settings, o.settings.data(), o.settings.size());
    pmem_persist(h, sizeof *h);
    memcpy(h->magic, kMagic, sizeof kMagic);  // valid only once the rest is durable
    pmem_persist(h->magic, sizeof kMagic);
  }
  is_pmem_ = pm != 0;
  if (o.power_fail) {
    power_fail_ = std::make_unique<PowerFail>(base_, size_, path_,
                                              o.profile.domain == PersistDomain::EADR, o.crash);
    if (nodes_) power_fail_->set_write_back([n = nodes_.get()](const char* shadow) { n->write_persistent(shadow); });
    g_power_fail = power_fail_.get();
  }
  // Fault every page in now: first-touch page faults inside the measured phase would be a cost
  // of the emulation (tmpfs), not of the device.
#ifdef MADV_POPULATE_WRITE
  madvise(base_, size_, MADV_POPULATE_WRITE);
#endif
  g_model.base = base_;
  g_model.end = base_ + size_;
  set_numa_layout(o.placement, o.numa_nodes, {});  // the threads' nodes come after (driver)
  g_model.node_span = nodes_ ? nodes_->node_span() : (size_ + o.numa_nodes - 1) / o.numa_nodes;
  g_model.nvm_interleave = nodes_ ? NodeImages::interleave() : kInterleaveBytes;
  calibrate();
  apply_profile();
}

void NvmImage::publish() {
  if (nodes_) nodes_->publish();
  if (creating_.empty()) return;
  if (rename(creating_.c_str(), path_.c_str()) != 0)
    throw DeviceError("cannot move the new NVM image to " + path_ + ": " + strerror(errno));
  creating_.clear();
}

NvmImage::~NvmImage() {
  if (!creating_.empty()) unlink(creating_.c_str());
  g_power_fail = nullptr;
  power_fail_.reset();
  if (base_ && !nodes_) pmem_unmap(base_, size_);
  nodes_.reset();
  g_model.base = g_model.end = nullptr;
  g_model.nvm_interleave = kInterleaveBytes;
  set_numa_layout(Placement::Stripe, 1, {});  // a later image or test starts from one node
}

bool NvmImage::has_region(const std::string& name) const {
  std::lock_guard g(mu_);
  ImageHeader* h = header(base_);
  for (uint32_t i = 0; i < h->nregions; i++)
    if (name == h->regions[i].name) return true;
  return false;
}

Region NvmImage::region(const std::string& name, uint64_t size, RegionKind kind) {
  std::lock_guard g(mu_);
  if (name.size() >= sizeof(RegionEntry::name)) throw DeviceError("region name too long: " + name);
  ImageHeader* h = header(base_);
  for (uint32_t i = 0; i < h->nregions; i++) {
    RegionEntry& e = h->regions[i];
    if (name != e.name) continue;
    if (e.size < size || e.kind != uint32_t(kind))
      throw DeviceError("NVM image region '" + name + "' does not match this run's layout");
    return Region{base_ + e.offset, e.size, kind, true};
  }
  if (h->nregions == kMaxRegions) throw DeviceError("NVM image has no room for region " + name);
  uint64_t off = align_up(h->next_free, kRegionAlign);
  if (off + size > size_)
    throw DeviceError("NVM full: region '" + name + "' needs " + format_size(size) + ", " +
                      format_size(off >= size_ ? 0 : size_ - off) + " left of --nvm-size " +
                      format_size(size_));
  RegionEntry& e = h->regions[h->nregions];
  memset(&e, 0, sizeof e);
  memcpy(e.name, name.data(), name.size());
  e.offset = off;
  e.size = size;
  e.kind = uint32_t(kind);
  durable(&e, sizeof e);
  h->next_free = off + size;
  h->nregions++;  // the entry becomes visible only after it is durable
  durable(&h->nregions, sizeof h->nregions + sizeof h->image_size + sizeof h->next_free);
  return Region{base_ + off, size, kind, false};
}

void NvmImage::durable(const void* p, size_t len) {
  pmem_persist(p, len);
  if (power_fail_) power_fail_->persist_now(p, len);
}

uint64_t NvmImage::used() const {
  std::lock_guard g(mu_);
  return header(base_)->next_free;
}

uint64_t NvmImage::used(RegionKind kind) const {
  std::lock_guard g(mu_);
  ImageHeader* h = header(base_);
  uint64_t s = 0;
  for (uint32_t i = 0; i < h->nregions; i++)
    if (h->regions[i].kind == uint32_t(kind)) s += h->regions[i].size;
  return s;
}

void NvmImage::calibrate() {
  using clk = std::chrono::steady_clock;
  // TSC rate: busy-waits are measured in TSC cycles.
  auto t0 = clk::now();
  uint64_t c0 = __rdtsc();
  while (clk::now() - t0 < std::chrono::milliseconds(20)) {}
  uint64_t c1 = __rdtsc();
  double ns = std::chrono::duration<double, std::nano>(clk::now() - t0).count();
  host_.tsc_ghz = double(c1 - c0) / ns;

  // Host DRAM random-read latency: a dependent pointer chase over 64 MB. An engine's access to
  // the emulated image already pays this, so the model charges only the difference.
  const size_t n = (64u << 20) / sizeof(uint64_t) / 8;  // one pointer per 64 B line
  std::vector<uint64_t> chase(n * 8);
  std::vector<uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(42));
  for (size_t i = 0; i < n; i++) chase[size_t(perm[i]) * 8] = uint64_t(perm[(i + 1) % n]) * 8;
  const int steps = 300000;
  uint64_t idx = 0;
  auto r0 = clk::now();
  for (int i = 0; i < steps; i++) idx = chase[idx];
  double rns = std::chrono::duration<double, std::nano>(clk::now() - r0).count() / steps;
  asm volatile("" : : "r"(idx) : "memory");  // the chase's result is used: it must run
  host_.dram_read_ns = rns;

  // Host persist latency: store + clwb + sfence on lines of the image's header area tail.
  char* line = base_ + kHeaderBytes - 4096;
  const int reps = 20000;
  auto p0 = clk::now();
  for (int i = 0; i < reps; i++) {
    line[(i % 64) * 64] = char(i);
    pmem_flush(line + (i % 64) * 64, 1);
    pmem_drain();
  }
  host_.persist_ns = std::chrono::duration<double, std::nano>(clk::now() - p0).count() / reps;
}

void NvmImage::set_writers(int writers) {
  writers_ = std::max(1, writers);
  apply_profile();
}

void NvmImage::apply_profile() {
  Model& m = g_model;
  m.charges = profile_.charges;
  m.eadr = profile_.domain == PersistDomain::EADR;
  m.remote_read_factor = profile_.remote_read_factor;
  m.remote_write_factor = profile_.remote_write_factor;
  m.tsc_per_ns = host_.tsc_ghz;
  host_.slower_than_target.clear();
  if (!profile_.charges) {
    m.read_unit_cycles = m.read_seq_unit_cycles = m.write_unit_cycles = m.fence_cycles = 0;
    return;
  }
  auto cyc = [&](double ns) { return uint64_t(std::max(0.0, ns) * host_.tsc_ghz + 0.5); };
  double read_extra = profile_.read_ns - host_.dram_read_ns;
  if (read_extra < 0) host_.slower_than_target.push_back("read latency");
  m.read_unit_cycles = cyc(read_extra);
  m.read_seq_unit_cycles = cyc(double(kUnit) / profile_.read_seq_gbps);
  m.write_unit_cycles = cyc(double(kUnit) / profile_.write_gbps_per_thread(writers_));
  double fence_extra = profile_.fence_ns - host_.persist_ns;
  if (fence_extra < 0) host_.slower_than_target.push_back("persist latency");
  m.fence_cycles = cyc(fence_extra);
  m.remote_dram_cycles = cyc((profile_.remote_dram_factor - 1.0) * host_.dram_read_ns);
}

}  // namespace nvt::dev
