// Where files named by a .cgf (File slots, read_file/write_file host tasks, plugin
// libraries) may live: inside the directories the user allowed (HostPolicy).
//
// Pure functions over the file system; thread-safe. A path is made absolute against
// HostPolicy::baseDir (or the current directory), resolved with every symlink followed
// (a dangling one too: its target is where a write would land; a file that does not
// exist yet resolves through its existing parent), and must then lie inside one of the
// equally resolved HostPolicy::allowedDirs (the current directory when the list is
// empty). `../` and symlinks that leave the allowed directories are refused with an
// Error naming the path:
//   `path '../x.bin' resolves to '/tmp/x.bin', outside the allowed directories (/work/a)`
// Time of check vs time of use: callers resolve right before opening, and open the
// resolved path, so a symlink swapped in later is not followed blindly by a second
// lookup; writers create a temporary beside the resolved path and rename it over the
// final component, which replaces a symlink put there since rather than following it.
#pragma once

#include "cgraph/error.h"
#include "cgraph/runtime/runtime.h"

#include <string>

namespace cgraph::rt {

// Returns the resolved absolute path when it is allowed.
Expected<std::string> resolveAllowedPath(const std::string &path, const HostPolicy &policy);

} // namespace cgraph::rt
