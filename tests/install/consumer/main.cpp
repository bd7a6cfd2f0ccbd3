#include <cgraph/graph/builder.h>
#include <cgraph/format/writer.h>
#include <cstdio>
int main() {
  cgraph::GraphBuilder b;
  cgraph::Slot s; s.name = "buf"; s.size = 256; s.init = cgraph::SlotInit::Transient;
  uint32_t slot = b.addSlot(s);
  cgraph::FillOp f; f.slot = slot; f.bytes = 256; f.pattern = {0x2a};
  b.addFill("fill", f);
  auto bytes = cgraph::writeCgf(b.take());
  if (!bytes) { std::fprintf(stderr, "%s\n", bytes.error().message().c_str()); return 1; }
  std::printf("wrote %zu bytes\n", bytes->size());
}
