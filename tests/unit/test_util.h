// Helpers shared by the unit tests: unique temporary NVM image paths under /dev/shm, removed
// when the test ends, and device options for small images.
#pragma once
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "storage/device/cost_profile.h"
#include "storage/device/nvm_image.h"

namespace nvt::test {

// A unique file name under /dev/shm; the file (if any) is removed on destruction.
class TempPath {
 public:
  explicit TempPath(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ = "/dev/shm/nvt-unit-" + std::to_string(getpid()) + "-" +
            std::to_string(counter.fetch_add(1)) + "-" + tag + ".img";
    unlink(path_.c_str());
  }
  ~TempPath() { unlink(path_.c_str()); }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  const std::string& str() const { return path_; }
  const char* c_str() const { return path_.c_str(); }

 private:
  std::string path_;
};

inline dev::DeviceOptions device_options(const std::string& path, uint64_t size,
                                         const std::string& profile = "dram",
                                         const std::string& layout = "unit-test") {
  dev::DeviceOptions d;
  d.path = path;
  d.size = size;
  d.layout = layout;
  d.profile = dev::profile_by_name(profile);
  return d;
}

// Drop an engine as a crash drops it: no destructor runs. Under ASan the abandoned object is
// registered as intentionally unreachable, so the leak checker still catches real leaks.
template <class T>
void drop_as_crash(std::unique_ptr<T>& p) {
  T* raw = p.release();
#if defined(__SANITIZE_ADDRESS__)
  __lsan_ignore_object(raw);
#else
  (void)raw;
#endif
}

}  // namespace nvt::test
