// Text from users' files need not be UTF-8 (a Latin-1 comment, a stray byte); JSON strings must
// be. Readers that put file text into JSON pass it through here first.
#pragma once

#include <string>
#include <string_view>

namespace vramplan {

// `text` with every byte that does not start or continue a well-formed UTF-8 sequence (RFC 3629:
// no overlong forms, surrogates or code points above U+10FFFF) replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace vramplan
