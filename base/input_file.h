// Reading a user's input file into memory, with a size limit.
//
// Every file llmplan reads (JSON configs, presets, profiles, shapes, CSV
// tables, nccl-tests curves, law and constants files) goes through
// read_input_file(), so that no input can make llmplan read forever or
// exhaust memory: a file is refused when it holds more than
// kMaxInputFileBytes (16 MiB). The largest real inputs (vTrain's measured
// times and all-reduce tables, llmplan-profile's profiles) are well under
// 1 MiB, so the cap is far above any genuine file; and it keeps the worst
// case small: parsed JSON can take 25 times its text in memory (a 16 MiB
// array of zeros is about 400 MB as a document), and the readers' row and
// entry caps bound what is kept after parsing.
//
// Regular files are checked by their size before anything is read. Other
// files -- a pipe, process substitution (<(cmd)), a character device such as
// /dev/zero -- are read up to the cap and refused when more follows, so
// `--config /dev/zero` stops after 16 MiB instead of reading forever.
// (Opening a named pipe that no process writes to blocks in the operating
// system, as it does for every program.)
//
// No Boost here: plain C++ for any module.
#ifndef LLMPLAN_BASE_INPUT_FILE_H_
#define LLMPLAN_BASE_INPUT_FILE_H_

#include <cstddef>
#include <string>

#include "base/status.h"

namespace llmplan {

// The largest input file llmplan reads: 16 MiB.
inline constexpr size_t kMaxInputFileBytes = size_t{16} << 20;

// Reads the whole file at `path` (bytes as they are; no newline
// translation). At most `max_bytes` bytes are read (REQUIRES: max_bytes <
// SIZE_MAX).
//
// Errors, one line each, starting with the path:
//  - NotFound "PATH: cannot open file" when it does not exist or cannot be
//    opened;
//  - InvalidArgument "PATH: is a directory, not a file";
//  - InvalidArgument "PATH: file too large: N bytes, more than the 16 MiB
//    limit for input files" (for a regular file; N is its size), or "PATH:
//    more than the 16 MiB limit for input files (not a regular file; reading
//    stopped there)" for a stream that goes on past the limit (the figure is
//    max_bytes in MiB, or in bytes when it is not a whole number of MiB);
//  - IoError "PATH: read error" when reading fails part way.
// Thread-safe (touches only the file).
Result<std::string> read_input_file(const std::string& path, size_t max_bytes = kMaxInputFileBytes);

}  // namespace llmplan

#endif  // LLMPLAN_BASE_INPUT_FILE_H_
