/* The C API from a plain C11 program: saxpy (examples/saxpy, compiled by cgc at build
 * time) on the cpu with the caller's memory bound in place, results checked, and the
 * error cases (status codes and messages). Usage: test_capi SAXPY.cgf */
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

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_capi SAXPY.cgf\n");
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
  cgraph_device_release(cpu);
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("all C API checks passed\n");
  return failures ? 1 : 0;
}
