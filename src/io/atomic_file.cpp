// SPDX-License-Identifier: MIT
// Files written under "<name>.part" and renamed when complete.
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "output_detail.hpp"

namespace shallows::io::detail {

fs::path part_path(const fs::path& final_path) {
  fs::path p = final_path;
  p += ".part";
  return p;
}

void commit_part(const fs::path& part, const fs::path& final_path) {
  std::error_code ec;
  fs::rename(part, final_path, ec);
  if (ec)
    throw std::runtime_error("cannot rename " + part.string() + " to " + final_path.string() + ": " +
                             ec.message());
}

void remove_stale(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
  if (ec) throw std::runtime_error("cannot remove stale output " + p.string() + ": " + ec.message());
}

fs::path reopen_part(const fs::path& final_path) {
  const fs::path part = part_path(final_path);
  std::error_code ec;
  if (fs::exists(part, ec)) return part;
  if (!fs::exists(final_path, ec))
    throw std::runtime_error("cannot restart: neither " + part.string() + " nor " + final_path.string() +
                             " exists (the outputs of the interrupted run)");
  commit_part(final_path, part);
  return part;
}

void require_earlier_frame(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw std::runtime_error("cannot restart: " + file.string() +
                             ", written before the checkpoint by the interrupted run, is missing");
}

AtomicFile::AtomicFile(fs::path final_path, bool append) : final_(std::move(final_path)), part_(part_path(final_)) {
  file_ = std::fopen(part_.c_str(), append ? "ab" : "wb");
  if (!file_) fail("cannot create");
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);  // incomplete: stays .part
}

void AtomicFile::fail(const char* what) const {
  const int err = errno;
  throw std::runtime_error(std::string(what) + " " + part_.string() + ": " +
                           (err ? std::strerror(err) : "I/O error"));
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (!file_) throw std::logic_error("AtomicFile::write after commit: " + part_.string());
  if (bytes == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, bytes, file_) != bytes) fail("cannot write");
}

void AtomicFile::flush() {
  if (!file_) return;
  errno = 0;
  if (std::fflush(file_) != 0) fail("cannot write");
}

void AtomicFile::commit() {
  if (!file_) throw std::logic_error("AtomicFile::commit twice: " + part_.string());
  errno = 0;
  const bool bad = std::fflush(file_) != 0 || std::ferror(file_) != 0;
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0 || bad) fail("cannot write");
  commit_part(part_, final_);
}

void write_file_atomic(const fs::path& final_path, std::string_view bytes) {
  AtomicFile f(final_path);
  f.write(bytes);
  f.commit();
}

std::string utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch && *epoch)
    t = static_cast<std::time_t>(std::atoll(epoch));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void cut_csv_rows(const fs::path& part, std::size_t rows) {
  std::ifstream in(part, std::ios::binary);
  std::size_t lines = 0, offset = 0;
  for (char ch; lines < rows + 1 && in.get(ch); ++offset)
    if (ch == '\n') ++lines;
  if (lines < rows + 1)
    throw std::runtime_error("cannot restart: " + part.string() + " holds " +
                             std::to_string(lines == 0 ? 0 : lines - 1) + " rows, the checkpoint needs " +
                             std::to_string(rows));
  in.close();
  std::error_code ec;
  fs::resize_file(part, offset, ec);
  if (ec) throw std::runtime_error("cannot truncate " + part.string() + ": " + ec.message());
}

}  // namespace shallows::io::detail
