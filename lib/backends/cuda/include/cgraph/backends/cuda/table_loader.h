// The CUDA backend's hand-written PTX: the replay graphs' table loader kernels
// (`cgraph_load_table_N`, N = 8, 16, 32, ..., 256, 496 values: `(u64 *table, u32 n,
// u64 values[N])` copies n by-value values into the table; cuda_backend.h) and the ring
// loader (`cgraph_load_ring`, CudaDevice::ringLoader), for sm_52 and newer.
//
// Ownership: returns a value. Thread-safety: pure function. Failures: none.
#pragma once

#include <string>

namespace cgraph::cuda {

std::string tableLoaderPtx();

} // namespace cgraph::cuda
