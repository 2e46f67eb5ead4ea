// The NVM image: a file mapped with libpmem (real persistent memory on a DAX file system,
// emulated elsewhere), a header that lets a restart check it is reading its own data, and named
// regions carved from it. Also owns the device model's calibration (device.h's g_model).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/device/cost_profile.h"
#include "storage/device/node_images.h"
#include "storage/device/power_fail.h"

namespace nvt::dev {

struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class RegionKind : uint32_t { Persistent = 1, Volatile = 2 };

struct Region {
  char* base = nullptr;
  uint64_t size = 0;
  RegionKind kind = RegionKind::Persistent;
  bool existed = false;  // found in the image (restart) rather than created now
};

struct DeviceOptions {
  std::string path;            // the image file, or node 0's file when node_paths is given
  std::vector<std::string> node_paths;  // one file per NUMA node (node_images.h); empty: one file
  Placement placement = Placement::Stripe;  // the run's; lays out the per-node files
  uint64_t size = 0;           // bytes; ignored when reopening
  bool reopen = false;         // restart: the image must exist and carry `layout`
  std::string layout;          // engine + schema description; must match on reopen
  std::string settings;        // the run's flags that shape the image (JSON), for --recover to read
  CostProfile profile;
  int writer_threads = 1;      // threads sharing the write bandwidth
  int numa_nodes = 1;          // logical nodes the image is striped over
  bool power_fail = false;     // keep a separate persistent image; crash per `crash`
  CrashSpec crash;
};

// An exclusive advisory lock (flock) on `<image>.lock`, held while an image is open: a second
// process on the same --nvm-path would otherwise replace (rename over) or rewrite the image
// under the first. A sidecar file because a new image is built beside the old one and renamed
// over it, so the image's own inode changes; the kernel drops the lock with a killed process,
// so a stale lock file never blocks. Throws DeviceError naming the path and the holder's pid.
class ImageLock {
 public:
  explicit ImageLock(const std::string& image_path);
  ~ImageLock();
  ImageLock(const ImageLock&) = delete;
  ImageLock& operator=(const ImageLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// What calibration found about the host, reported in the output.
struct HostCosts {
  double tsc_ghz = 0;
  double dram_read_ns = 0;     // dependent random reads, 64 MB working set
  double persist_ns = 0;       // store + clwb + sfence on the image
  std::vector<std::string> slower_than_target;  // costs the host already exceeds
};

class NvmImage {
 public:
  // 2: the header records the settings (read_image_settings).
  static constexpr uint32_t kLayoutVersion = 2;
  explicit NvmImage(const DeviceOptions& o);
  ~NvmImage();
  NvmImage(const NvmImage&) = delete;
  NvmImage& operator=(const NvmImage&) = delete;

  // A named region; on reopen an existing one of that name is returned as it was.
  Region region(const std::string& name, uint64_t size, RegionKind kind);
  bool has_region(const std::string& name) const;

  bool is_pmem() const { return is_pmem_; }
  bool reopened() const { return reopened_; }
  const std::string& path() const { return path_; }
  // Every file behind the image: one, or one per NUMA node.
  std::vector<std::string> paths() const { return nodes_paths_.empty() ? std::vector<std::string>{path_} : nodes_paths_; }
  uint64_t size() const { return size_; }
  uint64_t used() const;
  uint64_t used(RegionKind kind) const;
  const HostCosts& host() const { return host_; }
  const CostProfile& profile() const { return profile_; }

  // A newly created image replaces the file at its path only now (after the engine's layout
  // was set up), so that bad input or a failed setup never destroys an existing image.
  void publish();

  // Re-derive per-unit write cost when the number of writer threads changes.
  void set_writers(int writers);

 private:
  void calibrate();
  void durable(const void* p, size_t len);  // pmem_persist, mirrored in power-failure mode
  void apply_profile();

  std::string path_;
  std::vector<std::unique_ptr<ImageLock>> locks_;  // taken before anything touches the image; released last
  std::vector<std::string> nodes_paths_;
  std::unique_ptr<NodeImages> nodes_;  // the per-node files, when there are several
  std::string creating_;  // the file being built until publish()
  char* base_ = nullptr;
  uint64_t size_ = 0;
  bool is_pmem_ = false;
  bool reopened_ = false;
  CostProfile profile_;
  HostCosts host_;
  int writers_ = 1;
  std::unique_ptr<PowerFail> power_fail_;
  mutable std::mutex mu_;
};

// The settings (DeviceOptions::settings) recorded in the header of the single-file image at
// `path`; empty where there is no readable image of this layout version (a reopen then says why).
std::string read_image_settings(const std::string& path);

// Parse "512M", "2G", "4096" (bytes). Throws std::invalid_argument naming the text.
uint64_t parse_size(const std::string& text);
std::string format_size(uint64_t bytes);
// Throws DeviceError unless a new image file of `bytes` at `path` fits: in its file system's free
// space and, on tmpfs (the image then lives in the host's memory), in the memory available.
// Checked before the file is made, so that an image too large fails at once, naming both
// sizes, instead of filling the file system or getting the process killed for memory.
void check_room(const std::string& path, uint64_t bytes);
// The free bytes of the file system that would hold a new file at `path`, that file system's
// id (st_dev) and whether it is tmpfs; free is UINT64_MAX where it cannot be read.
struct Room {
  uint64_t free;
  uint64_t fs_id;
  bool tmpfs;
};
Room room_at(const std::string& path);

}  // namespace nvt::dev
