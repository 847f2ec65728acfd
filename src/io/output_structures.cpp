// SPDX-License-Identifier: MIT
// structures.csv (StructureSeriesWriter): one row per output time, each
// structure's discharge and volume so far, as gauges.csv samples the cells.
#include <stdexcept>
#include <vector>

#include "output_detail.hpp"
#include "shallows/io/output.hpp"

namespace shallows::io {

struct StructureSeriesWriter::Impl {
  std::unique_ptr<detail::AtomicFile> file;
  std::size_t structures = 0;
  std::vector<bool> breach;  // a breach: its width too
};

StructureSeriesWriter::StructureSeriesWriter(const std::filesystem::path& dir, const std::vector<Structure>& structures,
                                             std::size_t resume_rows)
    : impl_(std::make_unique<Impl>()) {
  impl_->structures = structures.size();
  for (const Structure& s : structures) impl_->breach.push_back(s.spec.kind == StructureKind::breach);
  const std::filesystem::path final_path = dir / "structures.csv";
  if (resume_rows > 0) {
    detail::cut_csv_rows(detail::reopen_part(final_path), resume_rows);
    impl_->file = std::make_unique<detail::AtomicFile>(final_path, true);
    return;
  }
  std::filesystem::create_directories(dir);
  detail::remove_stale(final_path);
  impl_->file = std::make_unique<detail::AtomicFile>(final_path);
  std::string header = "time";
  for (const Structure& s : structures) {
    header += "," + s.name + "_discharge," + s.name + "_volume";
    if (s.spec.kind == StructureKind::breach) header += "," + s.name + "_width";
  }
  impl_->file->write(header + "\n");
  impl_->file->flush();
}

StructureSeriesWriter::~StructureSeriesWriter() = default;

void StructureSeriesWriter::write(double time, const std::vector<double>& state) {
  if (state.size() != kTallyValues * impl_->structures)
    throw std::logic_error("structures.csv: " + std::to_string(state.size()) + " values for " +
                           std::to_string(impl_->structures) + " structures");
  std::string row = detail::format_number(time);
  for (std::size_t k = 0; k < impl_->structures; ++k) {
    const double* tally = state.data() + kTallyValues * k;
    for (std::size_t c = 0; c < 2; ++c) (row += ',') += detail::format_number(tally[c], 17);
    if (impl_->breach[k]) (row += ',') += detail::format_number(tally[3], 17);
  }
  impl_->file->write(row + "\n");
  impl_->file->flush();
}

void StructureSeriesWriter::finish() { impl_->file->commit(); }

}  // namespace shallows::io
