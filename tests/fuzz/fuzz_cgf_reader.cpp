// libFuzzer target for the .cgf reader. Besides "never crash, hang or leak", it checks
// the writer/reader contract on every input the reader accepts: the graph can be
// written, the written bytes read back, and writing that gives identical bytes.
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace cgraph;
  ReadOptions ro;
  ro.maxTotalBytes = 64u << 20;
  // Mutated inputs nearly always fail their checksums; reading without the checksum
  // check lets the fuzzer reach the record decoding behind it.
  for (bool verify : {true, false}) {
    ro.verifyChecksums = verify;
    Expected<Graph> g = readCgf(data, size, ro);
    if (!g) {
      if (g.error().message().empty()) std::abort();
      continue;
    }
    Expected<std::vector<uint8_t>> once = writeCgf(*g);
    if (!once) {
      std::fprintf(stderr, "reader accepted a graph the writer refuses: %s\n", once.error().message().c_str());
      std::abort();
    }
    Expected<Graph> back = readCgf(once->data(), once->size(), ro);
    if (!back) {
      std::fprintf(stderr, "reader refuses the writer's output: %s\n", back.error().message().c_str());
      std::abort();
    }
    Expected<std::vector<uint8_t>> twice = writeCgf(*back);
    if (!twice || *twice != *once) {
      std::fprintf(stderr, "writing is not deterministic across a round trip\n");
      std::abort();
    }
  }
  return 0;
}
