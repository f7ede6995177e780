// SPDX-License-Identifier: Apache-2.0
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

// While alive, SIGINT and SIGTERM set a flag instead of killing the process: the command stops
// at its next check and publishes nothing (CommandOutputs). A second signal stops the process at
// once, after removing every staged output (OutputTransaction::discard_staged_outputs) and saying
// so in one line - unless outputs are being renamed into place that very moment: then the renames
// finish and the command ends as after the first signal. The flags have static storage because a
// signal handler can reach nothing else: only this class touches them. Guards nest (main holds
// one for the whole process, a command another): a signal seen by either counts for both.
class InterruptGuard {
 public:
  // restore: put back the previous handlers when destroyed. main's guard does not: a signal after
  // the command finished, while the process exits, must not kill it silently with its outputs made.
  explicit InterruptGuard(bool restore = true);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  bool interrupted() const { return flag_.load(); }
  // Every output has been published: what a second signal says from now on.
  void outputs_published() { published_.store(true); }
  // The command's outcome has been said (its error line printed, or it finished): a later signal
  // changes nothing - the cleanup is done and a second line would contradict the first.
  static void outcome_reported() { reported_.store(true); }

 private:
  static void on_signal(int);
  static inline std::atomic<bool> flag_{false};
  static inline std::atomic<bool> published_{false};
  static inline std::atomic<bool> reported_{false};
  bool restore_;
  struct sigaction old_int_{}, old_term_{};
};

}  // namespace tpuemu::cli
