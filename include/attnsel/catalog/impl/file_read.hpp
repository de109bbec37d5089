// SPDX-License-Identifier: Apache-2.0
// Reading one regular file by descriptor, bounded: the one open/fstat/read path of catalogs and configs.
#pragma once

#include <attnsel/config.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Why the opened file `st` describes may not be read; empty for a regular file.
inline std::string not_regular_reason(const struct ::stat& st) {
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  if (S_ISDIR(st.st_mode)) return "is a directory, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

// What open(2)'s errno means for a file the caller named.
inline std::string open_failure(int error) {
  switch (error) {
    case ENOENT:
      return "no such file";
    case ELOOP:
      return "a loop of symbolic links (too many levels of symbolic links)";
    case EACCES:
      return "permission denied";
    case ENOTDIR:
      return "a component of the path is not a directory";
    case ENAMETOOLONG:
      return "the path is too long";
    default:
      return std::string("cannot be opened: ") + std::strerror(error);
  }
}

struct file_text {
  std::string text;
  std::string problem;  ///< empty when `text` is the whole file
};

// The whole of the regular file `path`, at most `limit` bytes. It is opened once, without blocking
// (O_NONBLOCK: a FIFO with no writer never waits) and with O_CLOEXEC, and checked on the descriptor
// (fstat), so nothing swapped in under the name between the check and the read is read; then reads
// block again (a regular file's reads do anyway). At most `limit` + 1 bytes are read, so a file that
// grows past the bound while it is read is refused like one that was already too large.
inline file_text read_regular_file(const std::string& path, std::size_t limit) {
  file_text out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    out.problem = open_failure(errno);
    return out;
  }
  struct ::stat st {};
  if (::fstat(fd, &st) != 0) {
    out.problem = std::string("cannot be examined: ") + std::strerror(errno);
  } else if (auto why = not_regular_reason(st); !why.empty()) {
    out.problem = std::move(why);
  } else if (static_cast<unsigned long long>(st.st_size) > limit) {
    out.problem = "file is " + std::to_string(st.st_size) + " bytes; the limit is " + std::to_string(limit);
  } else {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    out.text.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    while (out.text.size() <= limit) {
      const std::size_t want = std::min(sizeof buf, limit + 1 - out.text.size());
      const auto n = ::read(fd, buf, want);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        out.problem = std::string("read error: ") + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      out.text.append(buf, static_cast<std::size_t>(n));
    }
    if (out.problem.empty() && out.text.size() > limit)
      out.problem = "file grew past the limit of " + std::to_string(limit) + " bytes while it was read";
  }
  ::close(fd);
  if (!out.problem.empty()) out.text.clear();
  return out;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
