// SPDX-License-Identifier: Apache-2.0
// The one writer of every file the project produces (reports, traces, plans, CSVs, profiles).
//
// - "-" is standard output: the contents are written and flushed there, and a failed write is an
//   Error (a full disk, a closed pipe).
// - A regular file (or a new name) is replaced atomically: the contents go to a temporary file in
//   the same directory, are fsync'ed and renamed over the target, so the file appears whole or not
//   at all. An existing file keeps its mode and, where the process may set it, its owner and group.
//   A file without any write permission bit is refused, not replaced (even for root).
// - A symbolic link is followed: its final target is written by these rules and the link stays.
// - Anything else that exists - a character device such as /dev/null or /dev/stdout, a FIFO, a
//   socket - is written through, never replaced: opened for writing without creating or
//   truncating it. A FIFO without a reader is an error, not a hang. A directory is refused.
// Every failure throws Error "<path>: <cause>: <errno text>"; no temporary file is left behind.
// It is an OutputTransaction (output_transaction.h) of one file; a command with several outputs
// uses one transaction for all of them.
#pragma once

#include <filesystem>
#include <string_view>

namespace tpuemu {

void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

// Writes all of contents to a file descriptor (retrying short writes and EINTR); throws Error
// "<what>: write failed: <errno text>". Used for stdout and for written-through special files.
void write_all(int fd, std::string_view contents, std::string_view what);

// True when path names something write_file_atomically writes through (not a regular file or a
// new name): the CLI uses it to decide whether an output name may be derived next to an input.
bool is_regular_or_absent(const std::filesystem::path& path);

}  // namespace tpuemu
