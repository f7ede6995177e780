// SPDX-License-Identifier: Apache-2.0
// Python's pending signals as the stop request of work done without the GIL (tpuemu/base/stop.h):
// the work's loops poll the token, the token asks Python (PyErr_CheckSignals, which runs the
// handlers only on the main thread), and once the work has unwound with Interrupted the caller
// raises KeyboardInterrupt. So Ctrl-C ends an analysis, a plan or a run as it ends a Python loop.
#pragma once

#include <Python.h>

#include <atomic>
#include <chrono>

#include <pybind11/pybind11.h>

#include "tpuemu/base/stop.h"

namespace tpuemu::python {

class SignalStop {
 public:
  SignalStop() = default;
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  // Valid while this object lives. The GIL is taken at most once per kInterval: the loops poll
  // far more often than a person can press a key.
  StopToken token() {
    return StopToken([this] {
      if (signalled_.load()) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_asked_ < kInterval) return false;
      last_asked_ = now;
      pybind11::gil_scoped_acquire locked;
      if (PyErr_CheckSignals() != 0) {
        PyErr_Clear();  // raised again by raise_if_signalled, once the work has unwound
        signalled_.store(true);
      }
      return signalled_.load();
    });
  }

  bool signalled() const { return signalled_.load(); }

  // With the GIL held: KeyboardInterrupt when a signal stopped the work.
  void raise_if_signalled() const {
    if (!signalled()) return;
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw pybind11::error_already_set();
  }

 private:
  static constexpr std::chrono::milliseconds kInterval{20};
  std::atomic<bool> signalled_{false};
  std::chrono::steady_clock::time_point last_asked_{};
};

}  // namespace tpuemu::python
