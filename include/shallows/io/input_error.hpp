// SPDX-License-Identifier: MIT
#pragma once
#include <stdexcept>

namespace shallows::io {

// Bad input: the message names the file and the key or line at fault.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

} // namespace shallows::io
