// SPDX-License-Identifier: Apache-2.0
// A request to stop a long computation, polled by its loops. The command line's Ctrl-C / SIGTERM
// flag and Python's pending KeyboardInterrupt both reach the work this way: a StopToken travels in
// the options of each job (no global), and every loop that can run for more than a moment asks it
// (StopToken::throw_if_requested), so one signal ends any command within a fraction of a second.
#pragma once

#include <functional>
#include <string_view>
#include <utility>

#include "tpuemu/base/error.h"

namespace tpuemu {

// A stop was asked for and the work ended early. what() says what was written ("...; nothing was
// written"): the command line prints it as its interrupted line and exits 130.
class Interrupted : public Error {
 public:
  using Error::Error;
};

class StopToken {
 public:
  StopToken() = default;  // never asks to stop
  // `asked` is called from the loops that poll: it must be cheap (an atomic load) or limit its
  // own cost, and it may be called from any thread that does the work.
  explicit StopToken(std::function<bool()> asked) : asked_(std::move(asked)) {}

  // Whether anything can ask: work that pays for being stoppable (a run in slices) does so only then.
  explicit operator bool() const { return static_cast<bool>(asked_); }
  bool requested() const { return asked_ && asked_(); }
  // Throws Interrupted("interrupted during <work>; nothing was written") when a stop was asked.
  void throw_if_requested(std::string_view work) const;

 private:
  std::function<bool()> asked_;
};

}  // namespace tpuemu
