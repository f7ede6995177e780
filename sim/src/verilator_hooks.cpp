// SPDX-License-Identifier: Apache-2.0
// Verilator's user hooks for the product's models (see tpuemu/sim/verilator_messages.h).
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "verilated.h"

#include "tpuemu/sim/verilator_messages.h"

namespace {

struct Messages {
  std::mutex mutex;
  std::vector<std::string> lines;  // complete lines printed by the models
  std::string partial;             // text after the last newline
  bool error = false;
};

Messages& messages() {
  static Messages m;  // Verilator's hooks have no context to hang this on
  return m;
}

void add_text(const std::string& text, bool is_error) {
  Messages& m = messages();
  const std::lock_guard<std::mutex> lock(m.mutex);
  m.partial += text;
  for (std::size_t nl; (nl = m.partial.find('\n')) != std::string::npos;) {
    m.lines.push_back(m.partial.substr(0, nl));
    m.partial.erase(0, nl + 1);
  }
  if (is_error || text.find("%Error") != std::string::npos) m.error = true;
}

std::string location(const char* filename, int linenum) {
  return filename != nullptr && filename[0] != '\0' ? std::string(filename) + ":" + std::to_string(linenum) + ": "
                                                    : std::string();
}

}  // namespace

int tpuemu_vl_printf(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string text(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(text.data(), text.size() + 1, format, ap);
  va_end(ap);
  add_text(text, false);
  return n;
}

void vl_stop(const char* filename, int linenum, const char* /*hier*/) VL_MT_UNSAFE {
  Verilated::threadContextp()->gotError(true);
  Verilated::threadContextp()->gotFinish(true);
  add_text("%Error: " + location(filename, linenum) + "Verilog $stop\n", true);
}

void vl_fatal(const char* filename, int linenum, const char* /*hier*/, const char* msg) VL_MT_UNSAFE {
  Verilated::threadContextp()->gotError(true);
  Verilated::threadContextp()->gotFinish(true);
  add_text("%Error: " + location(filename, linenum) + (msg != nullptr ? msg : "fatal") + "\n", true);
}

void vl_finish(const char* /*filename*/, int /*linenum*/, const char* /*hier*/) VL_MT_UNSAFE {
  Verilated::threadContextp()->gotFinish(true);
}

namespace tpuemu::sim {

bool verilator_error_pending() {
  Messages& m = messages();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return m.error;
}

std::string take_verilator_error() {
  Messages& m = messages();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!m.partial.empty()) m.lines.push_back(std::move(m.partial));
  std::string first;
  std::size_t errors = 0;
  for (const std::string& l : m.lines) {
    if (l.find("%Error") == std::string::npos) continue;
    if (errors++ == 0) first = l;
  }
  // "[1234] %Error: file.sv:49: Assertion failed in TOP.x.y: message" -> "file.sv:49: message (at 1234)"
  std::string time;
  if (first.starts_with('[')) {
    time = first.substr(1, first.find(']') - 1);
    if (time == "0") time.clear();  // the models do not advance Verilator's time
  }
  std::string text = first.substr(first.find("%Error: ") != std::string::npos ? first.find("%Error: ") + 8 : 0);
  if (const auto a = text.find("Assertion failed in "); a != std::string::npos) {
    const auto colon = text.find(": ", a);
    text = text.substr(0, a) + (colon != std::string::npos ? text.substr(colon + 2) : std::string());
  }
  if (text.empty()) text = "the RTL model reported an error";
  if (!time.empty() || errors > 1) {
    text += " (";
    if (!time.empty()) text += "at time " + time;
    if (errors > 1) text += (time.empty() ? "" : "; ") + std::to_string(errors - 1) + " more error messages";
    text += ")";
  }
  m.lines.clear();
  m.partial.clear();
  m.error = false;
  return "RTL: " + text;
}

}  // namespace tpuemu::sim
