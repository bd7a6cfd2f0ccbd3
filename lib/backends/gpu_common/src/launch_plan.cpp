// The builtin fill/copy kernels' source (launch_plan.h), shared by cuda and hip.
#include "cgraph/backends/gpu_common/launch_plan.h"

#include "cgraph/kernel/opencl_compiler.h"

namespace cgraph::gpu {

const char *builtinKernelSource() {
  static const char *kSource = R"CL(
__kernel void cgraph_fill(__global uchar *dst, ulong bytes, __global const uchar *pattern, ulong psize) {
  const ulong stride = get_global_size(0);
  ulong i = get_global_id(0);
  if ((((ulong)dst | bytes) & 15) == 0 && (psize == 1 || psize == 2 || psize == 4 || psize == 8 || psize == 16)) {
    uchar16 v;
    for (int k = 0; k < 16; ++k) ((uchar *)&v)[k] = pattern[k % psize];
    for (; i < bytes / 16; i += stride) ((__global uchar16 *)dst)[i] = v;
    return;
  }
  for (; i < bytes; i += stride) dst[i] = pattern[i % psize];
}
__kernel void cgraph_copy(__global uchar *dst, __global const uchar *src, ulong width, ulong height,
                          ulong depth, ulong srcRow, ulong srcSlice, ulong dstRow, ulong dstSlice) {
  const ulong stride = get_global_size(0);
  ulong i = get_global_id(0);
  if (height == 1 && depth == 1) {
    if ((((ulong)dst | (ulong)src | width) & 15) == 0) {
      for (; i < width / 16; i += stride) ((__global uint4 *)dst)[i] = ((__global const uint4 *)src)[i];
      return;
    }
    for (; i < width; i += stride) dst[i] = src[i];
    return;
  }
  for (; i < width * height * depth; i += stride) {
    ulong x = i % width, y = (i / width) % height, z = i / (width * height);
    dst[z * dstSlice + y * dstRow + x] = src[z * srcSlice + y * srcRow + x];
  }
}
)CL";
  return kSource;
}

Expected<KernelModule> builtinKernelModule(const std::string &name) {
  auto r = compileOpenCL(builtinKernelSource(), name, CompileOptions{});
  if (!r) return r.error().withContext(name);
  KernelModule m;
  m.name = name;
  KernelForm f;
  f.kind = FormKind::SpirV;
  f.target = "spirv64";
  f.bytes = std::move(r->spirv);
  m.forms.push_back(std::move(f));
  return m;
}

} // namespace cgraph::gpu
