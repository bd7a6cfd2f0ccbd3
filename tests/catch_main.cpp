// main() of every Catch2 test executable without a device to probe first.
#include "catch_session.h"

int main(int argc, char **argv) { return cgraph::test::runCatchSession(argc, argv); }
