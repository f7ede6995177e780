// SPDX-License-Identifier: Apache-2.0
#include "progress.h"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

#include <fmt/format.h>

#include "tpuemu/base/output_transaction.h"

namespace tpuemu::cli {

static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler may only touch lock-free atomics");

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

void ProgressBar::update(const RunProgress& p) {
  if (!enabled_) return;
  if (p.steps_done == p.steps_total) {
    clear();
    return;
  }
  if (p.wall_seconds < 1.0) return;  // short runs stay silent
  constexpr int kWidth = 24;
  const double f = std::clamp(p.fraction_done, 0.0, 1.0);
  const int filled = static_cast<int>(f * kWidth);
  const double rate = static_cast<double>(p.cycles) / p.wall_seconds;
  const std::string eta = f > 0 ? fmt::format("ETA {:.0f} s", p.wall_seconds * (1 - f) / f) : "ETA ?";
  const std::string line =
      fmt::format("\r\033[K[{}{}] {}/{} layers  {}  {:.2f} M cycles  {:.0f} k cycles/s  {}", std::string(filled, '#'),
                  std::string(kWidth - filled, '.'), p.steps_done, p.steps_total, p.layer,
                  static_cast<double>(p.cycles) / 1e6, rate / 1e3, eta);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  shown_ = true;
}

void InterruptGuard::on_signal(int sig) {
  if (!flag_.exchange(true)) return;  // the first: a clean stop at the command's next check
  if (reported_.load()) return;  // the process is exiting with what it said
  if (OutputTransaction::publishing_outputs()) return;  // the renames finish, then the command stops
  // The second: stop now (a step may run for minutes), leaving no temporary file. Only
  // async-signal-safe calls from here on.
  (void)OutputTransaction::discard_staged_outputs();
  static constexpr char kNothing[] = "tpuemu: interrupted again: stopped at once; nothing was written\n";
  static constexpr char kAll[] = "tpuemu: interrupted again: stopped at once; every output had been written\n";
  const bool all = published_.load();
  (void)!::write(STDERR_FILENO, all ? kAll : kNothing, (all ? sizeof kAll : sizeof kNothing) - 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered when this handler returns: the process ends as killed by sig
}

InterruptGuard::InterruptGuard(bool restore) : restore_(restore) {
  // The flags stay as they are: a signal noted by an outer guard (main's) still counts in a command.
  struct sigaction sa {};
  sa.sa_handler = &InterruptGuard::on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked write returns EINTR and is retried after the check
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

InterruptGuard::~InterruptGuard() {
  if (!restore_) return;
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

}  // namespace tpuemu::cli
