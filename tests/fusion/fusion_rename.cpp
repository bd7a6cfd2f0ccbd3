// fusion_rename IN.cgf OUT.cgf: writes IN with every node and slot name followed by
// bytes that are not UTF-8 (0xff, 0xfe), for the test that cgfuse --json prints such
// names as valid JSON.
#include <cstdio>

#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fusion_rename IN.cgf OUT.cgf\n");
    return 2;
  }
  cgraph::Expected<cgraph::Graph> g = cgraph::readCgfFile(argv[1]);
  if (!g) {
    std::fprintf(stderr, "fusion_rename: %s\n", g.error().message().c_str());
    return 1;
  }
  for (cgraph::Node &n : g->nodes)
    n.name += "\xff";
  for (cgraph::Slot &s : g->slots)
    s.name += "\xfe";
  if (cgraph::Error e = cgraph::writeCgfFile(*g, argv[2])) {
    std::fprintf(stderr, "fusion_rename: %s\n", e.message().c_str());
    return 1;
  }
  return 0;
}
