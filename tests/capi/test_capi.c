/* The C API from a plain C11 program: saxpy (examples/saxpy, compiled by cgc at build
 * time) on the cpu with the caller's memory bound in place, results checked, and the
 * error cases (status codes and messages); the description compiler, fusion and saving
 * (examples/saxpy and examples/chain1000 compiled in-process, results equal to the
 * cgc-compiled file's); node times of profiled runs, their trace, and the kernel cache's
 * counters. Usage: test_capi SAXPY.cgf SOURCE_DIR */
#include "cgraph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

static int failures = 0;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond,     \
              cgraph_last_error());                                                                \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

#define REQUIRE_OK(call)                                                                           \
  do {                                                                                             \
    cgraph_status st_ = (call);                                                                    \
    if (st_ != CGRAPH_OK) {                                                                        \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,                     \
              cgraph_status_name(st_), cgraph_last_error());                                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

enum { kN = 1048576 };

static void test_introspection(cgraph_graph g) {
  CHECK(strcmp(cgraph_graph_name(g), "saxpy") == 0);
  CHECK(cgraph_graph_slot_count(g) == 2);
  CHECK(cgraph_graph_param_count(g) == 1);
  CHECK(cgraph_graph_node_count(g) == 2);
  uint32_t y = 99;
  REQUIRE_OK(cgraph_graph_find_slot(g, "y", &y));
  CHECK(y == 1);
  cgraph_slot_info info;
  REQUIRE_OK(cgraph_graph_slot_info(g, y, &info));
  CHECK(strcmp(info.name, "y") == 0);
  CHECK(info.size == (uint64_t)kN * 4);
  CHECK(info.element == CGRAPH_TYPE_F32);
  CHECK(info.external == 1 && info.read == 1 && info.written == 1);
  REQUIRE_OK(cgraph_graph_slot_info(g, 0, &info));
  CHECK(strcmp(info.name, "x") == 0 && info.external == 0 && info.written == 0);
  cgraph_param_info p;
  REQUIRE_OK(cgraph_graph_param_info(g, 0, &p));
  CHECK(strcmp(p.name, "a") == 0 && p.type == CGRAPH_TYPE_F32 && p.default_float == 2.0);
  CHECK(cgraph_type_size(p.type) == 4 && strcmp(cgraph_type_name(p.type), "f32") == 0);
}

static void test_graph_errors(cgraph_graph g) {
  cgraph_graph bad = (cgraph_graph)1;
  CHECK(cgraph_graph_load("/nonexistent/dir/graph.cgf", &bad) == CGRAPH_ERROR_IO);
  CHECK(bad == NULL);
  CHECK(strstr(cgraph_last_error(), "/nonexistent/dir/graph.cgf") != NULL);
  const char junk[] = "not a cgf file at all";
  CHECK(cgraph_graph_load_memory(junk, sizeof junk, &bad) == CGRAPH_ERROR_INVALID);
  CHECK(strlen(cgraph_last_error()) > 0);
  cgraph_slot_info info;
  CHECK(cgraph_graph_slot_info(g, 7, &info) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "slot index 7 is out of range") != NULL);
  uint32_t index;
  CHECK(cgraph_graph_find_slot(g, "z", &index) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "no slot 'z'") != NULL);
  CHECK(cgraph_graph_find_param(g, "b", &index) == CGRAPH_ERROR_INVALID);
  CHECK(cgraph_graph_load(NULL, &bad) == CGRAPH_ERROR_INVALID);
}

static cgraph_device open_cpu(void) {
  CHECK(cgraph_device_count() >= 1);
  cgraph_device first = NULL, cpu = NULL;
  REQUIRE_OK(cgraph_device_get(0, &first));
  cgraph_device_info info;
  REQUIRE_OK(cgraph_device_get_info(first, &info));
  CHECK(strcmp(info.backend, "cpu") == 0 && strcmp(info.spec, "cpu:0") == 0 &&
        info.host_memory == 1);
  CHECK(info.memory_bytes > 0);
  cgraph_device_release(first);
  CHECK(cgraph_device_open("nosuch:0", &cpu) == CGRAPH_ERROR_INVALID && cpu == NULL);
  CHECK(cgraph_device_get(cgraph_device_count(), &cpu) == CGRAPH_ERROR_INVALID);
  REQUIRE_OK(cgraph_device_open("cpu", &cpu));
  return cpu;
}

/* Runs y = a*x + y with y the caller's array; x is the graph's fill of 1.0. */
static void test_run(cgraph_executable exe) {
  float *y = aligned_alloc(64, (size_t)kN * 4);
  for (int i = 0; i < kN; ++i)
    y[i] = (float)(i % 100);
  cgraph_bindings b = NULL;
  REQUIRE_OK(cgraph_bindings_create(exe, &b));
  CHECK(cgraph_run(exe, b) == CGRAPH_ERROR_INVALID); /* y unbound */
  CHECK(strstr(cgraph_last_error(), "slot 'y'") != NULL);
  REQUIRE_OK(cgraph_bind_host(b, 1, y, (uint64_t)kN * 4));
  CHECK(cgraph_bound_address(b, 1) == y);
  REQUIRE_OK(cgraph_run(exe, b)); /* a = 2 (default) */
  REQUIRE_OK(cgraph_set_param_float_by_name(b, "a", 0.5));
  cgraph_event ev = NULL;
  REQUIRE_OK(cgraph_enqueue(exe, b, &ev));
  REQUIRE_OK(cgraph_event_wait(ev));
  CHECK(cgraph_event_is_complete(ev) == 1);
  cgraph_event_release(ev);
  int bad = 0;
  for (int i = 0; i < kN; ++i)
    if (fabsf(y[i] - ((float)(i % 100) + 2.5f)) > 1e-5f) ++bad;
  CHECK(bad == 0);
  float x[4] = {0};
  REQUIRE_OK(cgraph_slot_read(exe, 0, 4, x, sizeof x));
  CHECK(x[0] == 1.0f && x[3] == 1.0f);
  cgraph_bindings_release(b);
  free(y);
}

static void test_binding_errors(cgraph_executable exe) {
  cgraph_bindings b = NULL;
  REQUIRE_OK(cgraph_bindings_create(exe, &b));
  float *y = aligned_alloc(64, (size_t)kN * 4);
  CHECK(cgraph_bind_host(b, 5, y, (uint64_t)kN * 4) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "slot index 5 is out of range") != NULL);
  CHECK(cgraph_bind_host(b, 1, y, 16) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "slot 'y': 16 bytes bound") != NULL);
  CHECK(cgraph_bind_host(b, 1, (char *)y + 4, (uint64_t)kN * 4) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "alignment") != NULL);
  CHECK(cgraph_bind_host(b, 0, y, (uint64_t)kN * 4) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "slot 'x' is owned by the graph") != NULL);
  CHECK(cgraph_set_param_int(b, 0, 3) == CGRAPH_OK); /* an integer for an f32 param */
  CHECK(cgraph_set_param_float(b, 0, 1e300) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "param 'a'") != NULL);
  CHECK(cgraph_set_param_float(b, 1, 1.0) == CGRAPH_ERROR_INVALID);
  CHECK(cgraph_set_param_int_by_name(b, "nope", 1) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "no param 'nope'") != NULL);
  float x;
  CHECK(cgraph_slot_read(exe, 1, 0, &x, 4) == CGRAPH_ERROR_INVALID); /* external */
  CHECK(cgraph_slot_read(exe, 0, (uint64_t)kN * 4, &x, 4) == CGRAPH_ERROR_INVALID);
  CHECK(cgraph_enqueue(exe, NULL, NULL) == CGRAPH_ERROR_INVALID);
  cgraph_bindings_release(b);
  free(y);
}

/* A library buffer bound instead of host memory. */
static void test_buffer(cgraph_device cpu, cgraph_executable exe) {
  cgraph_buffer buf = NULL;
  REQUIRE_OK(cgraph_buffer_alloc(cpu, (uint64_t)kN * 4, &buf));
  CHECK(cgraph_buffer_size(buf) == (uint64_t)kN * 4);
  float v[2] = {10.0f, 20.0f};
  REQUIRE_OK(cgraph_buffer_write(buf, 0, v, sizeof v));
  CHECK(cgraph_buffer_write(buf, (uint64_t)kN * 4, v, sizeof v) == CGRAPH_ERROR_INVALID);
  cgraph_bindings b = NULL;
  REQUIRE_OK(cgraph_bindings_create(exe, &b));
  REQUIRE_OK(cgraph_bind_buffer(b, 1, buf, 0, 0));
  REQUIRE_OK(cgraph_set_param_int(b, 0, 3));
  cgraph_event ev = NULL;
  REQUIRE_OK(cgraph_enqueue(exe, b, &ev));
  cgraph_buffer_release(buf); /* the bindings and the submission keep it */
  REQUIRE_OK(cgraph_event_wait(ev));
  cgraph_event_release(ev);
  CHECK(cgraph_bound_address(b, 1) == NULL);
  cgraph_bindings_release(b);
}

/* Fails a call on another thread: that thread's message is its own. */
static int fail_on_thread(void *arg) {
  (void)arg;
  cgraph_slot_info info;
  if (cgraph_graph_slot_info(NULL, 0, &info) != CGRAPH_ERROR_INVALID) return 1;
  return strcmp(cgraph_last_error(), "graph is null") == 0 ? 0 : 1;
}

static void test_last_error_is_per_thread(void) {
  uint32_t index;
  CHECK(cgraph_graph_find_slot(NULL, "y", &index) == CGRAPH_ERROR_INVALID);
  CHECK(strcmp(cgraph_last_error(), "graph is null") == 0);
  cgraph_graph bad;
  CHECK(cgraph_graph_load("/nonexistent/a.cgf", &bad) == CGRAPH_ERROR_IO);
  thrd_t t;
  int result = -1;
  CHECK(thrd_create(&t, fail_on_thread, NULL) == thrd_success);
  CHECK(thrd_join(t, &result) == thrd_success && result == 0);
  CHECK(strstr(cgraph_last_error(), "/nonexistent/a.cgf") != NULL); /* untouched by the thread */
  CHECK(strcmp(cgraph_status_name((cgraph_status)42), "unknown") == 0);
  CHECK(strcmp(cgraph_type_name(CGRAPH_TYPE_UNKNOWN), "unknown") == 0 &&
        cgraph_type_size(CGRAPH_TYPE_UNKNOWN) == 0);
}

/* ---- compiling, fusing, saving ---------------------------------------------------- */

static void count_diagnostic(void *user_data, const char *text) {
  CHECK(text != NULL && strlen(text) > 0);
  ++*(int *)user_data;
}

static char *join(const char *a, const char *b) {
  char *out = malloc(strlen(a) + strlen(b) + 1);
  strcpy(out, a);
  strcat(out, b);
  return out;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = calloc(1, 1 << 16);
  size_t n = fread(text, 1, (1 << 16) - 1, f);
  fclose(f);
  CHECK(n > 0 && n < (1 << 16) - 1);
  return text;
}

/* y after one run of `g` (external slot "y" of `n` floats, y[i] = i % 100 before, param
 * "a" = 0.5) on the cpu; the caller frees it. */
static float *run_y(cgraph_device cpu, cgraph_graph g, int n) {
  cgraph_executable exe = NULL;
  REQUIRE_OK(cgraph_finalize(cpu, g, NULL, &exe));
  cgraph_bindings b = NULL;
  REQUIRE_OK(cgraph_bindings_create(exe, &b));
  float *y = aligned_alloc(64, (size_t)n * 4);
  for (int i = 0; i < n; ++i)
    y[i] = (float)(i % 100);
  uint32_t slot = 0;
  REQUIRE_OK(cgraph_graph_find_slot(g, "y", &slot));
  REQUIRE_OK(cgraph_bind_host(b, slot, y, (uint64_t)n * 4));
  REQUIRE_OK(cgraph_set_param_float_by_name(b, "a", 0.5));
  REQUIRE_OK(cgraph_run(exe, b));
  cgraph_bindings_release(b);
  cgraph_executable_release(exe);
  return y;
}

/* examples/saxpy compiled from its file and from its text equals cgc's .cgf. */
static void test_compile(cgraph_device cpu, const char *saxpy_cgf, const char *src) {
  char *path = join(src, "/examples/saxpy/graph.json");
  char *dir = join(src, "/examples/saxpy");
  cgraph_graph loaded = NULL, compiled = NULL, from_text = NULL;
  REQUIRE_OK(cgraph_graph_load(saxpy_cgf, &loaded));
  int diagnostics = 0;
  cgraph_compile_options opts = cgraph_compile_options_default();
  opts.diagnostic = count_diagnostic;
  opts.user_data = &diagnostics;
  REQUIRE_OK(cgraph_graph_compile_file(path, &opts, &compiled));
  CHECK(diagnostics == 0); /* saxpy compiles without warnings */
  CHECK(strcmp(cgraph_graph_name(compiled), "saxpy") == 0);
  CHECK(cgraph_graph_node_count(compiled) == cgraph_graph_node_count(loaded));
  CHECK(cgraph_graph_slot_count(compiled) == cgraph_graph_slot_count(loaded));
  CHECK(cgraph_graph_param_count(compiled) == cgraph_graph_param_count(loaded));
  char *text = read_text(path);
  CHECK(text != NULL);
  REQUIRE_OK(cgraph_graph_compile_string(text, dir, NULL, &from_text));
  float *want = run_y(cpu, loaded, kN);
  float *got = run_y(cpu, compiled, kN);
  float *got_text = run_y(cpu, from_text, kN);
  CHECK(memcmp(want, got, (size_t)kN * 4) == 0);
  CHECK(memcmp(want, got_text, (size_t)kN * 4) == 0);
  CHECK(want[7] == 7.5f);
  free(want), free(got), free(got_text), free(text), free(path), free(dir);
  cgraph_graph_release(loaded), cgraph_graph_release(compiled), cgraph_graph_release(from_text);
}

static void test_compile_errors(const char *src) {
  cgraph_graph g = (cgraph_graph)1;
  CHECK(cgraph_graph_compile_file("/nonexistent/dir/graph.json", NULL, &g) == CGRAPH_ERROR_IO);
  CHECK(g == NULL && strstr(cgraph_last_error(), "/nonexistent/dir/graph.json") != NULL);
  /* A JSON syntax error and a wrong type, each named by line and column. */
  CHECK(cgraph_graph_compile_string("{\"name\": }", NULL, NULL, &g) == CGRAPH_ERROR_INVALID);
  CHECK(strncmp(cgraph_last_error(), "<string>:1:10: error: ", 22) == 0);
  int diagnostics = 0;
  cgraph_compile_options opts = cgraph_compile_options_default();
  opts.source_name = "bad.json";
  opts.diagnostic = count_diagnostic;
  opts.user_data = &diagnostics;
  CHECK(cgraph_graph_compile_string("{\n  \"nodes\": 3\n}", NULL, &opts, &g) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "bad.json:2:12: error: 'nodes' must be an array") != NULL);
  CHECK(diagnostics == 1);
  /* A kernel file outside the base directory is refused unless allowed. */
  const char *outside = "{\"kernels\": [{\"file\": \"../saxpy/kernels/saxpy.cl\"}]}";
  char *mlp = join(src, "/examples/mlp");
  char *saxpy = join(src, "/examples/saxpy");
  CHECK(cgraph_graph_compile_string(outside, mlp, NULL, &g) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "outside the allowed directories") != NULL);
  CHECK(strstr(cgraph_last_error(), "; add its directory to allow_dirs") != NULL);
  const char *allow[] = {saxpy};
  opts = cgraph_compile_options_default();
  opts.allow_dirs = allow;
  opts.allow_dir_count = 1;
  REQUIRE_OK(cgraph_graph_compile_string(outside, mlp, &opts, &g));
  CHECK(cgraph_graph_node_count(g) == 0);
  cgraph_graph_release(g);
  opts.cl_std = "CL9.9";
  CHECK(cgraph_graph_compile_string(outside, mlp, &opts, &g) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "cl_std") != NULL);
  CHECK(cgraph_graph_compile_file(NULL, NULL, &g) == CGRAPH_ERROR_INVALID);
  free(mlp), free(saxpy);
}

/* examples/chain1000 fused: far fewer nodes, the same results, saved and loaded again. */
static void test_fuse_and_save(cgraph_device cpu, const char *saxpy_cgf, const char *src) {
  enum { n = 4096 };
  char *path = join(src, "/examples/chain1000/graph.json");
  cgraph_graph chain = NULL, fused = NULL, reloaded = NULL;
  REQUIRE_OK(cgraph_graph_compile_file(path, NULL, &chain));
  CHECK(cgraph_graph_node_count(chain) == 1000);
  int remarks = 0;
  cgraph_fuse_options opts = cgraph_fuse_options_default();
  opts.remark = count_diagnostic;
  opts.user_data = &remarks;
  REQUIRE_OK(cgraph_graph_fuse(chain, &opts, &fused));
  CHECK(cgraph_graph_node_count(chain) == 1000); /* the input is unchanged */
  CHECK(cgraph_graph_node_count(fused) < 100);
  CHECK(remarks > 0);
  float *want = run_y(cpu, chain, n);
  float *got = run_y(cpu, fused, n);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (fabsf(want[i] - got[i]) > 1e-4f * fabsf(want[i]) + 1e-6f) ++bad;
  CHECK(bad == 0);
  char *out = join(saxpy_cgf, ".fused.cgf");
  REQUIRE_OK(cgraph_graph_save(fused, out));
  REQUIRE_OK(cgraph_graph_load(out, &reloaded));
  CHECK(cgraph_graph_node_count(reloaded) == cgraph_graph_node_count(fused));
  float *again = run_y(cpu, reloaded, n);
  CHECK(memcmp(got, again, n * 4) == 0);
  remove(out);
  CHECK(cgraph_graph_save(fused, src) != CGRAPH_OK); /* a directory */
  CHECK(strstr(cgraph_last_error(), src) != NULL);
  cgraph_graph none = (cgraph_graph)1;
  opts = cgraph_fuse_options_default();
  opts.auto_fuse = 0;
  CHECK(cgraph_graph_fuse(chain, &opts, &none) == CGRAPH_ERROR_INVALID && none == NULL);
  CHECK(strstr(cgraph_last_error(), "nothing to fuse") != NULL);
  const char *scratch[] = {"nosuch"};
  opts = cgraph_fuse_options_default();
  opts.internalize = scratch;
  opts.internalize_count = 1;
  CHECK(cgraph_graph_fuse(chain, &opts, &none) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "nosuch") != NULL);
  free(want), free(got), free(again), free(out), free(path);
  cgraph_graph_release(chain), cgraph_graph_release(fused), cgraph_graph_release(reloaded);
}

/* The whole file at `path`, NUL-terminated (NULL when it cannot be read); the caller frees it. */
static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = size >= 0 ? calloc(1, (size_t)size + 1) : NULL;
  if (text && fread(text, 1, (size_t)size, f) != (size_t)size) free(text), text = NULL;
  fclose(f);
  return text;
}

/* How often `what` occurs in `text`. */
static int count_occurrences(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
    ++n;
  return n;
}

/* Profiles one run of `g` (y bound, n floats): every node timed once, start <= end, names
 * as the executable's graph has them (`name_ok` checks node i's name); the trace written
 * to `trace` has one complete event per node. Then a run without profiling has none. */
static void profile_graph(cgraph_device cpu, cgraph_graph g, int n, const char *trace,
                          int (*name_ok)(uint32_t node, const char *name)) {
  cgraph_executable exe = NULL;
  REQUIRE_OK(cgraph_finalize(cpu, g, NULL, &exe));
  const uint32_t nodes = cgraph_executable_node_count(exe);
  CHECK(nodes == cgraph_graph_node_count(g));
  cgraph_bindings b = NULL;
  REQUIRE_OK(cgraph_bindings_create(exe, &b));
  float *y = aligned_alloc(64, (size_t)n * 4);
  memset(y, 0, (size_t)n * 4);
  uint32_t slot = 0;
  REQUIRE_OK(cgraph_graph_find_slot(g, "y", &slot));
  REQUIRE_OK(cgraph_bind_host(b, slot, y, (uint64_t)n * 4));
  cgraph_submit_options so = cgraph_submit_options_default();
  CHECK(so.profile == 0 && so.stream == NULL);
  so.profile = 1;
  cgraph_event ev = NULL;
  REQUIRE_OK(cgraph_enqueue_ex(exe, b, &so, &ev));
  size_t count = 0;
  REQUIRE_OK(cgraph_event_node_times(ev, NULL, 0, &count));
  CHECK(count == nodes);
  cgraph_node_time *times = calloc(count + 1, sizeof *times);
  int *seen = calloc(nodes, sizeof *seen);
  REQUIRE_OK(cgraph_event_node_times(ev, times, count + 1, &count));
  for (size_t i = 0; i < count; ++i) {
    CHECK(times[i].node < nodes && times[i].start_ns <= times[i].end_ns);
    if (times[i].node >= nodes) continue;
    ++seen[times[i].node];
    cgraph_node_info info;
    REQUIRE_OK(cgraph_executable_node_info(exe, times[i].node, &info));
    CHECK(name_ok(times[i].node, info.name));
  }
  for (uint32_t i = 0; i < nodes; ++i)
    CHECK(seen[i] == 1);
  REQUIRE_OK(cgraph_event_write_trace(ev, trace, "test_capi"));
  char *text = read_all(trace);
  CHECK(text != NULL && strstr(text, "\"traceEvents\"") != NULL);
  if (text) CHECK(count_occurrences(text, "\"ph\":\"X\"") == (int)nodes);
  free(text);
  cgraph_event_release(ev);
  /* Not profiled: no times, and no trace to write. */
  REQUIRE_OK(cgraph_enqueue(exe, b, &ev));
  REQUIRE_OK(cgraph_event_node_times(ev, times, count, &count));
  CHECK(count == 0);
  CHECK(cgraph_event_write_trace(ev, trace, NULL) == CGRAPH_ERROR_INVALID);
  CHECK(strstr(cgraph_last_error(), "no node times") != NULL);
  cgraph_event_release(ev);
  cgraph_node_info info;
  CHECK(cgraph_executable_node_info(exe, nodes, &info) == CGRAPH_ERROR_INVALID);
  free(times), free(seen), free(y);
  cgraph_bindings_release(b);
  cgraph_executable_release(exe);
}

static int saxpy_name(uint32_t node, const char *name) {
  return strcmp(name, node == 0 ? "saxpy" : "sum") == 0;
}

static int chain_name(uint32_t node, const char *name) {
  char want[32];
  snprintf(want, sizeof want, "axpy.%u", (unsigned)node);
  return strcmp(name, want) == 0;
}

/* Node times and traces of saxpy and chain1000; a trace to an unwritable path is IO. */
static void test_profile(cgraph_device cpu, const char *saxpy_cgf, const char *src) {
  cgraph_graph saxpy = NULL, chain = NULL;
  REQUIRE_OK(cgraph_graph_load(saxpy_cgf, &saxpy));
  char *trace = join(saxpy_cgf, ".trace.json");
  profile_graph(cpu, saxpy, kN, trace, saxpy_name);
  char *path = join(src, "/examples/chain1000/graph.json");
  REQUIRE_OK(cgraph_graph_compile_file(path, NULL, &chain));
  profile_graph(cpu, chain, 4096, trace, chain_name);
  remove(trace);
  cgraph_executable exe = NULL;
  REQUIRE_OK(cgraph_finalize(cpu, saxpy, NULL, &exe));
  cgraph_bindings b = NULL;
  REQUIRE_OK(cgraph_bindings_create(exe, &b));
  float *y = aligned_alloc(64, (size_t)kN * 4);
  REQUIRE_OK(cgraph_bind_host(b, 1, y, (uint64_t)kN * 4));
  cgraph_submit_options so = cgraph_submit_options_default();
  so.profile = 1;
  cgraph_event ev = NULL;
  REQUIRE_OK(cgraph_enqueue_ex(exe, b, &so, &ev));
  CHECK(cgraph_event_write_trace(ev, "/nonexistent/dir/t.json", NULL) == CGRAPH_ERROR_IO);
  CHECK(strstr(cgraph_last_error(), "/nonexistent/dir/t.json") != NULL);
  cgraph_event_release(ev);
  cgraph_bindings_release(b);
  cgraph_executable_release(exe);
  free(y), free(trace), free(path);
  cgraph_graph_release(saxpy), cgraph_graph_release(chain);
}

/* The cache's counters: a kernel new to this process is a memory miss (then a disk hit
 * or a build) at its first finalize and a memory hit at its second; finalizes without
 * the cache are not counted. */
/* Communicators: the data-parallel example (an all_reduce) as a world of one through
 * the local communicator, 20 SGD steps against the same steps' weights from cgrun's
 * reference in the examples test (here: the weights move and stay finite); a graph
 * with collectives refused without one; NCCL's entry points where NCCL is missing. */
static void test_communicators(cgraph_device cpu, const char *src) {
  char *path = join(src, "/examples/data-parallel/graph.json");
  cgraph_graph g = NULL;
  REQUIRE_OK(cgraph_graph_compile_file(path, NULL, &g));
  cgraph_executable exe = (cgraph_executable)1;
  CHECK(cgraph_finalize(cpu, g, NULL, &exe) == CGRAPH_ERROR_INVALID && exe == NULL);
  CHECK(strstr(cgraph_last_error(), "no communicator was given") != NULL);
  cgraph_communicator comm = NULL;
  REQUIRE_OK(cgraph_communicator_local(&comm));
  uint32_t rank = 9, world = 9;
  const char *name = NULL;
  REQUIRE_OK(cgraph_communicator_info(comm, &rank, &world, &name));
  CHECK(rank == 0 && world == 1 && strcmp(name, "local") == 0);
  cgraph_finalize_options opts = cgraph_finalize_options_default();
  CHECK(opts.communicator == NULL && opts.collective_timeout_ms == 60000);
  opts.communicator = comm;
  REQUIRE_OK(cgraph_finalize(cpu, g, &opts, &exe));
  cgraph_communicator_release(comm); /* the executable keeps its reference */
  cgraph_bindings b = NULL;
  REQUIRE_OK(cgraph_bindings_create(exe, &b));
  for (int step = 0; step < 20; ++step) REQUIRE_OK(cgraph_run(exe, b));
  uint32_t w = 0;
  REQUIRE_OK(cgraph_graph_find_slot(g, "w", &w));
  float weights[16];
  REQUIRE_OK(cgraph_slot_read(exe, w, 0, weights, sizeof weights));
  int moved = 0;
  for (int i = 0; i < 16; ++i) {
    CHECK(weights[i] == weights[i] && fabsf(weights[i]) < 100.0f);
    moved += weights[i] != 0.0f;
  }
  CHECK(moved > 8);
  cgraph_bindings_release(b);
  cgraph_executable_release(exe);
  cgraph_graph_release(g);
  free(path);
  /* NCCL: an error naming the library where it is missing, NULL arguments refused. */
  uint8_t id[CGRAPH_NCCL_UNIQUE_ID_BYTES];
  cgraph_status st = cgraph_nccl_unique_id(id);
  if (st != CGRAPH_OK) {
    CHECK(st == CGRAPH_ERROR_UNSUPPORTED && strstr(cgraph_last_error(), ".so") != NULL);
    CHECK(cgraph_communicator_nccl(id, 0, 2, 0, 1000, &comm) == CGRAPH_ERROR_UNSUPPORTED && comm == NULL);
  }
  CHECK(cgraph_communicator_wrap_nccl(NULL, &comm) == CGRAPH_ERROR_INVALID && comm == NULL);
  CHECK(cgraph_communicator_info(NULL, &rank, NULL, NULL) == CGRAPH_ERROR_INVALID);
}

static void test_cache_stats(cgraph_device cpu, const char *saxpy_cgf) {
  CHECK(cgraph_cache_stats(NULL) == CGRAPH_ERROR_INVALID);
  char *kernel = join(saxpy_cgf, ".stats.cl");
  FILE *f = fopen(kernel, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("__kernel void capi_cache_stats(__global float *y) { y[get_global_id(0)] *= 3.0f; }\n", f);
  fclose(f);
  const char *base = strrchr(kernel, '/') + 1;
  char json[512];
  snprintf(json, sizeof json,
           "{\"name\": \"stats\", \"kernels\": [{\"file\": \"%s\"}],"
           " \"slots\": [{\"name\": \"y\", \"count\": 64, \"type\": \"f32\", \"external\": true}],"
           " \"nodes\": [{\"name\": \"k\", \"kernel\": \"capi_cache_stats\", \"global\": [64], \"args\": [\"y\"]}]}",
           base);
  char *dir = malloc(strlen(kernel) + 1);
  strcpy(dir, kernel);
  dir[base - 1 - kernel] = '\0';
  cgraph_graph g = NULL;
  REQUIRE_OK(cgraph_graph_compile_string(json, dir, NULL, &g));
  cgraph_cache_counters before, first, second, after;
  REQUIRE_OK(cgraph_cache_stats(&before));
  cgraph_executable exe = NULL;
  REQUIRE_OK(cgraph_finalize(cpu, g, NULL, &exe));
  cgraph_executable_release(exe);
  REQUIRE_OK(cgraph_cache_stats(&first));
  const uint64_t missed = first.memory_misses - before.memory_misses;
  CHECK(missed >= 1);
  CHECK((first.disk_hits - before.disk_hits) + (first.builds - before.builds) == missed);
  REQUIRE_OK(cgraph_finalize(cpu, g, NULL, &exe));
  cgraph_executable_release(exe);
  REQUIRE_OK(cgraph_cache_stats(&second));
  CHECK(second.memory_misses == first.memory_misses && second.builds == first.builds);
  CHECK(second.memory_hits - first.memory_hits >= 1);
  cgraph_finalize_options no_cache = cgraph_finalize_options_default();
  no_cache.use_cache = 0;
  REQUIRE_OK(cgraph_finalize(cpu, g, &no_cache, &exe));
  cgraph_executable_release(exe);
  REQUIRE_OK(cgraph_cache_stats(&after));
  CHECK(memcmp(&after, &second, sizeof after) == 0);
  cgraph_graph_release(g);
  remove(kernel);
  free(kernel), free(dir);
}

/* cgraph_finalize_progress: one call per kernel module (saxpy.cgf has one), with the
 * caller's pointer; a NULL callback is cgraph_finalize. */
struct progress_log {
  int calls;
  uint64_t done, total;
  int phase_ok;
};
static void on_progress(const char *phase, uint64_t done, uint64_t total, void *user) {
  struct progress_log *log = user;
  ++log->calls;
  log->done = done;
  log->total = total;
  log->phase_ok = strcmp(phase, "compiling kernels") == 0;
}
static void test_finalize_progress(cgraph_device cpu, const char *saxpy_cgf) {
  cgraph_graph g = NULL;
  REQUIRE_OK(cgraph_graph_load(saxpy_cgf, &g));
  struct progress_log log = {0, 0, 0, 0};
  cgraph_executable exe = NULL;
  REQUIRE_OK(cgraph_finalize_progress(cpu, g, NULL, on_progress, &log, &exe));
  CHECK(log.calls == 1 && log.done == 1 && log.total == 1 && log.phase_ok);
  cgraph_executable_release(exe);
  exe = NULL;
  REQUIRE_OK(cgraph_finalize_progress(cpu, g, NULL, NULL, NULL, &exe));
  CHECK(exe != NULL);
  cgraph_executable_release(exe);
  cgraph_graph_release(g);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_capi SAXPY.cgf SOURCE_DIR\n");
    return 2;
  }
  CHECK(cgraph_api_version() == CGRAPH_API_VERSION);
  CHECK(strlen(cgraph_version()) > 0);
  CHECK(strcmp(cgraph_status_name(CGRAPH_ERROR_OUT_OF_MEMORY), "out_of_memory") == 0);
  test_last_error_is_per_thread();
  cgraph_graph g = NULL;
  REQUIRE_OK(cgraph_graph_load(argv[1], &g));
  test_introspection(g);
  test_graph_errors(g);
  cgraph_device cpu = open_cpu();
  cgraph_executable exe = NULL;
  cgraph_finalize_options opts = cgraph_finalize_options_default();
  REQUIRE_OK(cgraph_finalize(cpu, g, &opts, &exe));
  cgraph_graph_release(g); /* the executable holds its own copy */
  test_run(exe);
  test_binding_errors(exe);
  test_buffer(cpu, exe);
  cgraph_executable none = exe;
  CHECK(cgraph_finalize(cpu, NULL, &opts, &none) == CGRAPH_ERROR_INVALID && none == NULL);
  cgraph_executable_release(exe);
  test_compile(cpu, argv[1], argv[2]);
  test_compile_errors(argv[2]);
  test_fuse_and_save(cpu, argv[1], argv[2]);
  test_profile(cpu, argv[1], argv[2]);
  test_cache_stats(cpu, argv[1]);
  test_communicators(cpu, argv[2]);
  test_finalize_progress(cpu, argv[1]);
  cgraph_device_release(cpu);
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("all C API checks passed\n");
  return failures ? 1 : 0;
}
