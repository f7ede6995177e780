// What a long `tpuemu run` shows and how it stops: a one-line progress bar on stderr (only when
// stderr is a terminal, not with --quiet or --json, and only once the run has taken a second),
// and Ctrl-C turned into a clean stop between two steps (exit 130, no files written).
#pragma once

#include <atomic>
#include <csignal>

#include "tpuemu/run/runner.h"

namespace tpuemu::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void update(const RunProgress& p);

 private:
  void clear();
  bool enabled_;
  bool shown_ = false;
};

// While alive, SIGINT and SIGTERM set a flag instead of killing the process; a second signal
// kills it as usual (SA_RESETHAND). The flag has static storage because a signal handler can reach
// nothing else: it is the one such object in the program, and only this class touches it.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  bool interrupted() const { return flag_.load(); }

 private:
  static void on_signal(int);
  static inline std::atomic<bool> flag_{false};
  struct sigaction old_int_{}, old_term_{};
};

}  // namespace tpuemu::cli
