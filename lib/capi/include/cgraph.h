/* cgraph C API: load .cgf command graphs (or compile graph descriptions, fuse and save
 * them), finalize them for a device, bind memory and run them, from C or through a
 * foreign-function interface (the Python package uses it through ctypes).
 * Library: libcgraph.so (CMake target cgraph_capi).
 *
 * Conventions (every function):
 * - Plain C types only; handles are opaque pointers. A handle returned through an `out`
 *   argument is owned by the caller and freed with its cgraph_*_release function
 *   (releasing NULL does nothing). On failure `*out` is set to NULL.
 * - Functions that can fail return a cgraph_status. CGRAPH_OK is 0; on any other value
 *   cgraph_last_error() holds a one-line message naming what failed (`slot 'y': bound
 *   range is 16 bytes, the graph needs at least 4096`). Nothing is printed, no C++
 *   exception crosses the API and no failure aborts the process (an allocation failure
 *   is CGRAPH_ERROR_OUT_OF_MEMORY).
 * - Strings returned by the library (names, messages) are NUL-terminated UTF-8 owned by
 *   the library; their lifetime is stated per function.
 * - Thread-safety: different handles may be used from different threads at the same
 *   time. One handle must not be used from two threads at once, except cgraph_graph and
 *   cgraph_device (read-only after creation: any thread, concurrently) and
 *   cgraph_event_wait (several threads may wait on one event).
 */
#ifndef CGRAPH_H
#define CGRAPH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CGRAPH_API __attribute__((visibility("default")))
#else
#define CGRAPH_API
#endif

/* Version of this header's API; cgraph_api_version() returns the library's. A library
 * with the same value is compatible with this header. */
#define CGRAPH_API_VERSION 3

/* Status codes; the values are stable. Non-zero values mirror cgraph::ErrorCode. */
typedef enum cgraph_status {
  CGRAPH_OK = 0,
  CGRAPH_ERROR_INVALID = 1,       /* bad input: malformed file, wrong argument or binding */
  CGRAPH_ERROR_OUT_OF_MEMORY = 2, /* a host or device allocation failed */
  CGRAPH_ERROR_DEVICE_LOST = 3,   /* the device or its driver failed */
  CGRAPH_ERROR_UNSUPPORTED = 4,   /* valid, but this device or build cannot do it */
  CGRAPH_ERROR_IO = 5,            /* a file operation failed */
  CGRAPH_ERROR_TIMEOUT = 6,       /* a wait ran past its limit */
  CGRAPH_ERROR_INTERNAL = 7       /* a broken invariant inside cgraph */
} cgraph_status;

/* Element types of slots and parameters; values mirror the .cgf format's scalar types. */
typedef enum cgraph_type {
  CGRAPH_TYPE_UNKNOWN = 0, /* a slot no kernel argument types (or typed inconsistently) */
  CGRAPH_TYPE_I8 = 1,
  CGRAPH_TYPE_I16 = 2,
  CGRAPH_TYPE_I32 = 3,
  CGRAPH_TYPE_I64 = 4,
  CGRAPH_TYPE_U8 = 5,
  CGRAPH_TYPE_U16 = 6,
  CGRAPH_TYPE_U32 = 7,
  CGRAPH_TYPE_U64 = 8,
  CGRAPH_TYPE_F16 = 9,
  CGRAPH_TYPE_F32 = 10,
  CGRAPH_TYPE_F64 = 11
} cgraph_type;

typedef enum cgraph_mode {
  CGRAPH_MODE_REPLAY = 0, /* pre-resolved schedule / native command buffer (default) */
  CGRAPH_MODE_EAGER = 1   /* node by node through the ordinary submit path */
} cgraph_mode;

typedef struct cgraph_graph_s *cgraph_graph;           /* a loaded or compiled graph (immutable) */
typedef struct cgraph_device_s *cgraph_device;         /* a device of a compiled-in backend */
typedef struct cgraph_executable_s *cgraph_executable; /* a graph finalized for a device */
typedef struct cgraph_bindings_s *cgraph_bindings;     /* slot bindings + parameter values */
typedef struct cgraph_event_s *cgraph_event;           /* one submission */
typedef struct cgraph_buffer_s *cgraph_buffer;         /* device memory the library allocated */
typedef struct cgraph_communicator_s *cgraph_communicator; /* the ranks collective nodes run across */

/* ---- library ------------------------------------------------------------------- */

/* The library version ("0.1.0"); static storage. Never fails. */
CGRAPH_API const char *cgraph_version(void);
/* The API version the library implements (CGRAPH_API_VERSION it was built with). */
CGRAPH_API int cgraph_api_version(void);
/* The message of the last failed call on the calling thread ("" when none has failed).
 * Thread-local; valid until the next cgraph call on this thread. */
CGRAPH_API const char *cgraph_last_error(void);
/* The status's name: "ok", "invalid", "out_of_memory", ... ("unknown" for other values);
 * static storage. */
CGRAPH_API const char *cgraph_status_name(cgraph_status status);
/* The type's name ("f32", "i64", ...; "unknown"); static storage. */
CGRAPH_API const char *cgraph_type_name(cgraph_type type);
/* Size in bytes of one element of `type` (0 for CGRAPH_TYPE_UNKNOWN). */
CGRAPH_API size_t cgraph_type_size(cgraph_type type);

/* ---- graphs -------------------------------------------------------------------- */

/* Reads a .cgf file. Failures: the file cannot be opened or read (IO, the message names
 * the path and the system error), the contents are not a valid .cgf (INVALID). */
CGRAPH_API cgraph_status cgraph_graph_load(const char *path, cgraph_graph *out);
/* Reads a .cgf image from memory (`size` bytes at `data`, copied; the caller may free
 * it when the call returns). Failures as cgraph_graph_load, without IO. */
CGRAPH_API cgraph_status cgraph_graph_load_memory(const void *data, size_t size, cgraph_graph *out);
/* Frees the graph. Executables finalized from it stay valid (they hold a copy). */
CGRAPH_API void cgraph_graph_release(cgraph_graph graph);

/* The graph's name (valid while the graph lives). */
CGRAPH_API const char *cgraph_graph_name(cgraph_graph graph);
CGRAPH_API uint32_t cgraph_graph_slot_count(cgraph_graph graph);
CGRAPH_API uint32_t cgraph_graph_param_count(cgraph_graph graph);
CGRAPH_API uint32_t cgraph_graph_node_count(cgraph_graph graph);

typedef struct cgraph_slot_info {
  const char *name;    /* valid while the graph lives */
  uint64_t size;       /* bytes a binding must hold (declared size or what nodes reach) */
  uint32_t alignment;  /* a bound address must be a multiple of it */
  cgraph_type element; /* from the kernels' argument types; UNKNOWN when none or mixed */
  int external;        /* 1: the caller binds it per submission; 0: the graph owns it */
  int read;            /* 1: some node reads it */
  int written;         /* 1: some node writes it */
  int size_varies;     /* 1: the size is a parameter expression: `size` is its value at the
                        * parameters' defaults; a binding must hold the size at the run's
                        * values (checked when the run is submitted) */
} cgraph_slot_info;

/* Slot `index` (0 .. slot_count-1). Failures: index out of range (INVALID). */
CGRAPH_API cgraph_status cgraph_graph_slot_info(cgraph_graph graph, uint32_t index,
                                                cgraph_slot_info *out);
/* Index of the slot named `name`. Failures: no such slot (INVALID, naming the slots). */
CGRAPH_API cgraph_status cgraph_graph_find_slot(cgraph_graph graph, const char *name,
                                                uint32_t *index);

typedef struct cgraph_param_info {
  const char *name; /* valid while the graph lives */
  cgraph_type type;
  int64_t default_int;  /* the default, for integer types */
  double default_float; /* the default, for floating-point types */
} cgraph_param_info;

/* Parameter `index` (0 .. param_count-1). Failures: index out of range (INVALID). */
CGRAPH_API cgraph_status cgraph_graph_param_info(cgraph_graph graph, uint32_t index,
                                                 cgraph_param_info *out);
/* Index of the parameter named `name`. Failures: no such parameter (INVALID). */
CGRAPH_API cgraph_status cgraph_graph_find_param(cgraph_graph graph, const char *name,
                                                 uint32_t *index);

/* ---- compiling, fusing and saving graphs ---------------------------------------------- */

/* Receives one diagnostic: `text` is one message in clang's format
 * (`graph.json:12:7: error: node 'k2' reads slot 'tmp' that no node writes`, `warning:`,
 * `note:`), or the OpenCL C compiler's messages for a kernel file (several lines). Valid
 * only during the call; called on the compiling thread. */
typedef void (*cgraph_diagnostic_fn)(void *user_data, const char *text);

typedef struct cgraph_compile_options {
  /* OpenCL C include directories (-I), in order; also allowed for reading. */
  const char *const *include_dirs;
  size_t include_dir_count;
  /* More directories the description may read files from (kernels, data_file,
   * subgraphs), besides its own folder (compile_string: `base_dir`) and the include
   * directories; files elsewhere are refused before they are read. */
  const char *const *allow_dirs;
  size_t allow_dir_count;
  /* Macros for every OpenCL C file: "NAME" or "NAME=VALUE". */
  const char *const *defines;
  size_t define_count;
  /* OpenCL C version: "CL1.2" (NULL: the default), "CL2.0" or "CL3.0". */
  const char *cl_std;
  /* 1: also store each kernel file's OpenCL C source in the graph. */
  int keep_source;
  /* Name diagnostics give a description compiled from a string (NULL: "<string>"). */
  const char *source_name;
  /* Called for every diagnostic, warnings included (NULL: none). Whatever it is, the
   * errors also reach cgraph_last_error(). */
  cgraph_diagnostic_fn diagnostic;
  void *user_data;
} cgraph_compile_options;

/* Default options: no include or extra allowed directories, no defines, CL1.2. */
CGRAPH_API cgraph_compile_options cgraph_compile_options_default(void);

/* Compiles the graph description (docs/graph-json.md: JSON and the OpenCL C / SPIR-V
 * kernel files it names) at `path` into a graph, the same graph `cgc` writes to a .cgf
 * (options NULL = defaults). Relative paths in it resolve against its folder. The
 * strings and arrays of `options` are read during the call only. Failures: the file
 * cannot be read (IO); anything wrong in the description or its kernels (INVALID). On
 * failure cgraph_last_error() holds every diagnostic of the compilation (errors, notes,
 * warnings), one per line, in clang's format (`graph.json:12:7: error: ...`). An
 * unknown cl_std is INVALID. Thread-safety: concurrent compilations are safe; each calls
 * its own `diagnostic`. */
CGRAPH_API cgraph_status cgraph_graph_compile_file(const char *path,
                                                   const cgraph_compile_options *options,
                                                   cgraph_graph *out);
/* As cgraph_graph_compile_file for the description `json` (NUL-terminated UTF-8);
 * relative paths resolve against, and files may be read inside, `base_dir` (NULL: the
 * current directory). */
CGRAPH_API cgraph_status cgraph_graph_compile_string(const char *json, const char *base_dir,
                                                     const cgraph_compile_options *options,
                                                     cgraph_graph *out);

typedef struct cgraph_fuse_options {
  /* 1: find chains of kernel nodes and fuse each where legal (`cgfuse --auto`). */
  int auto_fuse;
  /* The most kernels one automatic chain takes (0: no limit); longer ones are cut. */
  uint32_t max_group;
  /* Explicit groups, fused before the automatic chains: each a comma-separated list of
   * kernel node names in execution order ("a,b,c", `cgfuse --fuse`). */
  const char *const *groups;
  size_t group_count;
  /* Scratch slots: transient slots only the fused kernels use, whose contents nobody
   * needs, which may become private or local memory and leave the graph. */
  const char *const *internalize;
  size_t internalize_count;
  /* Called with each remark: what was fused, and why the rest was not
   * (`[a,b] refused: local sizes differ: 64 vs 128`); NULL: none. */
  cgraph_diagnostic_fn remark;
  void *user_data;
} cgraph_fuse_options;

/* Default options: automatic fusion on, chains of at most 256 kernels, no scratch slots. */
CGRAPH_API cgraph_fuse_options cgraph_fuse_options_default(void);

/* A new graph: `graph` with chains of its kernel nodes fused into single kernels (lib/
 * fusion, what `cgfuse` does; options NULL = defaults). `graph` is not changed. A chain
 * the fusion rules refuse stays as it was (a remark says why), so the result may have
 * the same nodes. Failures (INVALID): neither auto_fuse nor groups; an explicit group
 * naming an unknown node or breaking a rule (fewer than two nodes, a node that is not
 * a kernel, an order against the edges); a name in `internalize` that is not a slot. Thread-safety: concurrent calls are safe, on one graph too. */
CGRAPH_API cgraph_status cgraph_graph_fuse(cgraph_graph graph, const cgraph_fuse_options *options,
                                           cgraph_graph *out);

/* Writes the graph as a .cgf file at `path`: a regular file is replaced atomically
 * (temporary file, fsync, rename: on failure the old file is untouched), a device or FIFO
 * is written through, a symbolic link is followed; a directory is refused. Failures: IO
 * (naming the path and the system error), a graph the format cannot encode (INVALID). */
CGRAPH_API cgraph_status cgraph_graph_save(cgraph_graph graph, const char *path);

/* ---- devices ------------------------------------------------------------------- */

/* Devices of the compiled-in backends whose driver is present (cpu first), numbered from
 * 0 in that order. Probes the drivers on first use (process-wide, thread-safe). */
CGRAPH_API uint32_t cgraph_device_count(void);
/* Opens device `index` (0 .. cgraph_device_count()-1). Failures: index out of range
 * (INVALID); the driver fails to open it (DEVICE_LOST or as reported). */
CGRAPH_API cgraph_status cgraph_device_get(uint32_t index, cgraph_device *out);
/* Opens a device by spec: a backend name with an optional index ("cpu", "cpu:0",
 * "opencl:1"). Failures: unknown backend or index (INVALID). */
CGRAPH_API cgraph_status cgraph_device_open(const char *spec, cgraph_device *out);
/* Frees the handle; the device itself stays open for the process (a later get or open
 * returns it again). Executables, buffers and bindings made from it stay valid. */
CGRAPH_API void cgraph_device_release(cgraph_device device);

typedef struct cgraph_device_info {
  const char *backend; /* "cpu", "opencl", "cuda", ...; valid while the handle lives */
  const char *name;    /* the device's name */
  const char *vendor;
  const char *spec;      /* "cpu:0": what cgraph_device_open accepts for it */
  uint64_t memory_bytes; /* global memory (0 = unknown) */
  uint32_t compute_units;
  int host_memory; /* 1: cgraph_bind_host works on it (the cpu backend) */
} cgraph_device_info;

/* Fills `out`. Never fails for a valid handle (INVALID for NULL). */
CGRAPH_API cgraph_status cgraph_device_get_info(cgraph_device device, cgraph_device_info *out);

/* ---- communicators (collective nodes) ----------------------------------------- */
/* A communicator is bound at finalize (cgraph_finalize_options.communicator); rank and
 * world size reach the graph as its `rank` and `world` parameters, which the caller
 * sets. Every rank must finalize the same collectives (compared at finalize). A
 * communicator handle may be used by one executable's submissions at a time. */

/* A world of one rank: every collective copies (or is nothing in place). For the cpu
 * backend; never fails but for a NULL `out`. */
CGRAPH_API cgraph_status cgraph_communicator_local(cgraph_communicator *out);
/* NCCL's unique id (128 bytes), made by rank 0 and given to every rank by the caller
 * (a torch.distributed broadcast, a file, MPI). UNSUPPORTED without libnccl.so.2. */
#define CGRAPH_NCCL_UNIQUE_ID_BYTES 128
CGRAPH_API cgraph_status cgraph_nccl_unique_id(uint8_t id[CGRAPH_NCCL_UNIQUE_ID_BYTES]);
/* Joins an NCCL world as `rank` of `world` on CUDA device `cuda_device` (the one the
 * executables use), for collectives on the cuda backend. Blocks until every rank has
 * joined, or TIMEOUT after `timeout_ms`. UNSUPPORTED without NCCL or a CUDA driver. */
CGRAPH_API cgraph_status cgraph_communicator_nccl(const uint8_t id[CGRAPH_NCCL_UNIQUE_ID_BYTES], uint32_t rank,
                                                  uint32_t world, int cuda_device, uint64_t timeout_ms,
                                                  cgraph_communicator *out);
/* A communicator over the caller's ncclComm_t (passed as a pointer), which the caller
 * keeps and destroys after every executable using it is released. */
CGRAPH_API cgraph_status cgraph_communicator_wrap_nccl(void *nccl_comm, cgraph_communicator *out);
/* This rank, the world size and the transport's name ("local", "nccl"; valid while the
 * handle lives). Any output may be NULL; INVALID for a NULL handle. */
CGRAPH_API cgraph_status cgraph_communicator_info(cgraph_communicator comm, uint32_t *rank, uint32_t *world,
                                                  const char **name);
/* Drops the caller's reference; executables finalized with it keep theirs. */
CGRAPH_API void cgraph_communicator_release(cgraph_communicator comm);

/* ---- executables --------------------------------------------------------------- */

typedef struct cgraph_finalize_options {
  cgraph_mode mode; /* CGRAPH_MODE_REPLAY (0) or CGRAPH_MODE_EAGER */
  int use_cache;    /* 1: in-memory and persistent kernel binary cache; 0: compile afresh */
  /* Directory that relative file paths of the graph (file slots, host tasks) resolve
   * against and may read or write inside; NULL = the current directory. Copied. */
  const char *base_dir;
  /* 1: transient slots whose lifetimes do not overlap share memory (the memory plan);
   * 0: each has its own. */
  int plan_memory;
  /* Collective nodes run through this communicator (NULL: a graph with collective nodes
   * fails to finalize). The executable keeps a reference: the handle may be released
   * first. */
  cgraph_communicator communicator;
  /* The longest one collective (or the ranks' comparison at finalize) may wait for the
   * other ranks, in milliseconds; past it the submission fails with TIMEOUT. */
  uint64_t collective_timeout_ms;
} cgraph_finalize_options;

/* Default options: replay mode, cache on, the current directory, memory planning on,
 * no communicator, a 60 s collective timeout. */
CGRAPH_API cgraph_finalize_options cgraph_finalize_options_default(void);

/* Compiles the graph's kernels for `device` and builds an executable (options NULL =
 * defaults). The executable keeps its own copy of the graph and allocates the slots the
 * graph owns. Failures: a graph the device cannot run (INVALID or UNSUPPORTED, naming the
 * node or kernel), allocation (OUT_OF_MEMORY). The device handle may be released first. */
CGRAPH_API cgraph_status cgraph_finalize(cgraph_device device, cgraph_graph graph,
                                         const cgraph_finalize_options *options,
                                         cgraph_executable *out);
/* Progress of a finalize: `phase` ("compiling kernels"), steps done and their total
 * (done == total: the phase ended), and the caller's `user` pointer. Called on the
 * finalizing thread, before cgraph_finalize_progress returns; `phase` is valid during
 * the call only. */
typedef void (*cgraph_progress_fn)(const char *phase, uint64_t done, uint64_t total, void *user);
/* cgraph_finalize, calling `progress` (may be NULL) once per kernel module as the
 * backend compiles or loads it, for a progress display of a long finalize. */
CGRAPH_API cgraph_status cgraph_finalize_progress(cgraph_device device, cgraph_graph graph,
                                                  const cgraph_finalize_options *options,
                                                  cgraph_progress_fn progress, void *user,
                                                  cgraph_executable *out);
/* Bytes of device memory the executable holds for slots the graph owns (including
 * transient slots, which grow with the largest parameter values seen), and the memory
 * plan's figures: the transient slots that share its arena, and their bytes
 * without and with sharing (sizes at the parameters' defaults). Any output may be
 * NULL. Fails only for a NULL executable (INVALID). */
CGRAPH_API cgraph_status cgraph_executable_memory(cgraph_executable exe, uint64_t *owned_bytes,
                                                  uint32_t *plan_slots, uint64_t *plan_bytes_before,
                                                  uint64_t *plan_bytes_after);
/* Frees the executable. Every event of it must have been waited on, and bindings made
 * from it released, first. */
CGRAPH_API void cgraph_executable_release(cgraph_executable exe);

/* Copies `bytes` bytes at `offset` of slot `slot`, which the graph owns (not external),
 * to `dst`. Wait for the submissions that write it first. Failures: slot out of range,
 * an external slot, a range past the slot's end (INVALID); a slot whose size is a
 * parameter expression (UNSUPPORTED: the runtime resizes it per submission); a transient
 * slot (UNSUPPORTED: its contents are not kept between submissions, and its memory may
 * be shared with other transient slots; make it external to read it). */
CGRAPH_API cgraph_status cgraph_slot_read(cgraph_executable exe, uint32_t slot, uint64_t offset,
                                          void *dst, uint64_t bytes);
/* Copies `bytes` bytes from `src` into slot `slot` (owned by the graph) at `offset`;
 * later submissions see them. Failures as cgraph_slot_read. */
CGRAPH_API cgraph_status cgraph_slot_write(cgraph_executable exe, uint32_t slot, uint64_t offset,
                                           const void *src, uint64_t bytes);

/* ---- buffers ------------------------------------------------------------------- */

/* Allocates `bytes` bytes of device memory (contents undefined). Failures:
 * OUT_OF_MEMORY. The buffer may outlive the device handle. */
CGRAPH_API cgraph_status cgraph_buffer_alloc(cgraph_device device, uint64_t bytes,
                                             cgraph_buffer *out);
CGRAPH_API uint64_t cgraph_buffer_size(cgraph_buffer buffer);
/* Synchronous copies between host memory and the buffer. Failures: a range past the end
 * (INVALID). Wait for submissions that use the buffer first. */
CGRAPH_API cgraph_status cgraph_buffer_write(cgraph_buffer buffer, uint64_t offset, const void *src,
                                             uint64_t bytes);
CGRAPH_API cgraph_status cgraph_buffer_read(cgraph_buffer buffer, uint64_t offset, void *dst,
                                            uint64_t bytes);
/* Frees the buffer. Submissions that bind it keep it alive until they complete. */
CGRAPH_API void cgraph_buffer_release(cgraph_buffer buffer);

/* ---- bindings and parameters ------------------------------------------------------ */

/* A binding table for `exe`: every external slot unbound, every parameter at its
 * default. It is the caller's to fill and reuse across submissions; a submission copies
 * what it needs, so the table may be changed right after cgraph_enqueue returns.
 * Release it before the executable. */
CGRAPH_API cgraph_status cgraph_bindings_create(cgraph_executable exe, cgraph_bindings *out);
CGRAPH_API void cgraph_bindings_release(cgraph_bindings bindings);

/* Binds `bytes` bytes of host memory at `ptr` to external slot `slot`, without a copy:
 * kernels read and write that memory. Only on devices with host_memory (cpu). The caller
 * keeps the memory valid and unmoved until every submission that binds it has
 * completed (cgraph_event_wait). Binding the same address and size again costs nothing.
 * Failures (INVALID unless said): slot out of range; a slot the graph owns; `bytes`
 * less than the slot's size; `ptr` not a multiple of the slot's alignment; a device
 * without host memory (UNSUPPORTED). */
CGRAPH_API cgraph_status cgraph_bind_host(cgraph_bindings bindings, uint32_t slot, void *ptr,
                                          uint64_t bytes);
/* Binds `bytes` bytes of device memory at `address` to external slot `slot`, without a
 * copy: on cuda a CUdeviceptr of the device's primary context (what the CUDA runtime,
 * PyTorch and CuPy allocate in), on cpu a host address as cgraph_bind_host. The caller
 * keeps the memory allocated until every submission that binds it has completed.
 * Failures: as cgraph_bind_host; an address that is not memory of the executable's
 * device or a range past its allocation (INVALID); a backend that cannot wrap memory
 * (UNSUPPORTED). */
CGRAPH_API cgraph_status cgraph_bind_device(cgraph_bindings bindings, uint32_t slot, uint64_t address,
                                            uint64_t bytes);
/* Binds `length` bytes at `offset` of `buffer` (length 0 = to its end) to external slot
 * `slot`. The buffer must come from the executable's device. Failures as cgraph_bind_host
 * (sizes are checked at enqueue). */
CGRAPH_API cgraph_status cgraph_bind_buffer(cgraph_bindings bindings, uint32_t slot,
                                            cgraph_buffer buffer, uint64_t offset, uint64_t length);
/* Removes the binding of `slot`. Failures: slot out of range (INVALID). */
CGRAPH_API cgraph_status cgraph_unbind(cgraph_bindings bindings, uint32_t slot);
/* The host address bound to `slot` (NULL when unbound or bound to a cgraph_buffer). */
CGRAPH_API void *cgraph_bound_address(cgraph_bindings bindings, uint32_t slot);

/* Sets parameter `index` for later submissions. Integer parameters take
 * cgraph_set_param_int (range-checked against the type); floating-point ones take either
 * function. Failures: index out of range, a value out of range or a double for an
 * integer parameter (INVALID, naming the parameter). */
CGRAPH_API cgraph_status cgraph_set_param_int(cgraph_bindings bindings, uint32_t index,
                                              int64_t value);
CGRAPH_API cgraph_status cgraph_set_param_float(cgraph_bindings bindings, uint32_t index,
                                                double value);
/* The same by name. Failures: no such parameter (INVALID). */
CGRAPH_API cgraph_status cgraph_set_param_int_by_name(cgraph_bindings bindings, const char *name,
                                                      int64_t value);
CGRAPH_API cgraph_status cgraph_set_param_float_by_name(cgraph_bindings bindings, const char *name,
                                                        double value);

/* ---- submissions ----------------------------------------------------------------- */

/* Validates `bindings` against the graph (every external slot bound, sizes, alignment,
 * overlaps: errors name the slot) and submits one run. Submissions of one executable run
 * in order. Nothing runs when it fails. `out` receives an event to wait on; it keeps
 * the bound cgraph_buffers alive (not host memory: see cgraph_bind_host). */
CGRAPH_API cgraph_status cgraph_enqueue(cgraph_executable exe, cgraph_bindings bindings,
                                        cgraph_event *out);
/* cgraph_enqueue ordered with the caller's native stream (cuda: a CUstream of the
 * device's primary context, e.g. torch.cuda.current_stream().cuda_stream): the run starts
 * after the work queued on `stream` so far, and work queued on `stream` afterwards
 * starts after the run; the host waits for neither. `stream` must stay valid until the
 * run completed. NULL: as cgraph_enqueue; the legacy default stream is CU_STREAM_LEGACY
 * ((void *)0x1), the per-thread one CU_STREAM_PER_THREAD ((void *)0x2), as for every
 * driver call. Failures as cgraph_enqueue; a device that
 * takes no caller streams (every backend but cuda): UNSUPPORTED.
 * A stream being captured (cuStreamBeginCapture, torch.cuda.graph): the run is recorded
 * into the caller's graph with these bindings and values instead of launched, and runs
 * whenever that graph does; `out` is then a completed event. The recorded run uses the
 * executable's runtime-owned memory: it must not run concurrently with the
 * executable's own submissions. Graphs with host tasks, conditional or collective
 * nodes, and profiled submissions: UNSUPPORTED. */
CGRAPH_API cgraph_status cgraph_enqueue_on_stream(cgraph_executable exe, cgraph_bindings bindings, void *stream,
                                                  cgraph_event *out);
/* Blocks until the submission completed; returns its failure, if any (a host task that
 * failed, a device fault). May be called again and from several threads. */
CGRAPH_API cgraph_status cgraph_event_wait(cgraph_event event);
/* 1 when the submission has completed, 0 when not. */
CGRAPH_API int cgraph_event_is_complete(cgraph_event event);
/* Frees the handle; first waits for the submission if it is still running (its result
 * is then dropped: call cgraph_event_wait to see it). */
CGRAPH_API void cgraph_event_release(cgraph_event event);

/* cgraph_enqueue, then cgraph_event_wait, then release of the event. */
CGRAPH_API cgraph_status cgraph_run(cgraph_executable exe, cgraph_bindings bindings);

/* ---- profiling, traces and the kernel cache ---------------------------------------- */

typedef struct cgraph_submit_options {
  /* 1: time every node of the run (cgraph_event_node_times). A device that cannot time
   * nodes in the executable's mode (cuda in replay, hip) refuses the submission with an
   * error; it never runs the graph another way instead. */
  int profile;
  /* The caller's native stream, as cgraph_enqueue_on_stream takes it; NULL: none. */
  void *stream;
} cgraph_submit_options;

/* Default options: no profiling, no stream. */
CGRAPH_API cgraph_submit_options cgraph_submit_options_default(void);

/* cgraph_enqueue with options (NULL = defaults). Failures as cgraph_enqueue_on_stream,
 * and a profiled submission on a device that cannot time nodes. */
CGRAPH_API cgraph_status cgraph_enqueue_ex(cgraph_executable exe, cgraph_bindings bindings,
                                           const cgraph_submit_options *options, cgraph_event *out);

/* One timed node of a profiled submission. Times are nanoseconds from the submission's
 * start on the device's clock (the host's steady clock on the cpu). */
typedef struct cgraph_node_time {
  uint32_t node;     /* index in the executable's graph (cgraph_executable_node_info) */
  uint32_t lane;     /* thread / queue / stream that ran it, for trace viewers */
  uint64_t start_ns; /* start <= end */
  uint64_t end_ns;
} cgraph_node_time;

/* Waits for the submission, then copies its node times (at most `capacity` entries,
 * in the order the backend reports them) to `out` and sets `*count` to how many there
 * are (0 when the submission was not profiled); `out` may be NULL when `capacity` is 0,
 * to ask for the count. The executable must still be alive. Failures: the
 * submission's own failure (as cgraph_event_wait); NULL event or count (INVALID). */
CGRAPH_API cgraph_status cgraph_event_node_times(cgraph_event event, cgraph_node_time *out,
                                                 size_t capacity, size_t *count);

/* Writes the node times of a profiled submission as Chrome trace event JSON (what
 * `cgrun --trace` writes, opened by chrome://tracing and Perfetto): one complete event
 * per timed node, named after the node, its kind as category. `path`: a regular file is
 * replaced atomically, "-" is standard output, a device or FIFO is written through.
 * `process_name` (NULL: "cgraph") names the process row. Waits for the submission; the
 * executable must still be alive. Failures: the submission's own failure; IO (naming the
 * path); an event that was not profiled (INVALID). */
CGRAPH_API cgraph_status cgraph_event_write_trace(cgraph_event event, const char *path,
                                                  const char *process_name);

/* Nodes of the executable's graph as finalized (subgraphs flattened): what the node
 * indices of cgraph_node_time refer to. Fails only for a NULL executable (count 0). */
CGRAPH_API uint32_t cgraph_executable_node_count(cgraph_executable exe);

typedef struct cgraph_node_info {
  const char *name;   /* valid while the executable lives; "" for an unnamed node */
  const char *kind;   /* "kernel", "copy", "fill", "host", ...; static storage */
  const char *kernel; /* a kernel node's kernel name ("" for other kinds); as `name` */
} cgraph_node_info;

/* Node `index` (0 .. cgraph_executable_node_count-1) of the executable's graph.
 * Failures: index out of range (INVALID). */
CGRAPH_API cgraph_status cgraph_executable_node_info(cgraph_executable exe, uint32_t index,
                                                     cgraph_node_info *out);

/* Counters of the kernel cache (lib/cache), summed over every backend and device of
 * the process since it started; finalizes with use_cache 0 are not counted. */
typedef struct cgraph_cache_counters {
  uint64_t memory_hits;    /* kernels found compiled in memory */
  uint64_t memory_misses;  /* not in memory: then loaded from disk or built */
  uint64_t disk_hits;      /* misses answered by a binary from the persistent cache */
  uint64_t disk_rejects;   /* binaries on disk the device refused (then rebuilt) */
  uint64_t builds;         /* kernels compiled */
  uint64_t build_failures; /* compilations that failed */
} cgraph_cache_counters;

/* Fills `out` with the process's cache counters. Thread-safe (counters of concurrent
 * finalizes may be seen in part). Fails only for a NULL `out` (INVALID). */
CGRAPH_API cgraph_status cgraph_cache_stats(cgraph_cache_counters *out);

#ifdef __cplusplus
}
#endif

#endif /* CGRAPH_H */
