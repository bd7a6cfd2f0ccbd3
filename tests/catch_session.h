// The Catch2 session runner shared by every test executable (cgraph_catch_session).
//
// Tests must never touch the user's cache: ctest gives each test its own
// CGRAPH_CACHE_DIR (tests/CMakeLists.txt, cgraph_finish_tests); a test binary started by
// hand without one gets a fresh temporary directory, removed again when it exits.
#pragma once

namespace cgraph::test {

// Runs the Catch2 session over argc/argv and returns its exit code (2 when the
// temporary cache directory cannot be made). Call once, from main(); not thread-safe.
int runCatchSession(int argc, char **argv);

} // namespace cgraph::test
