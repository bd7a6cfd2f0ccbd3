/* Per-submission time of the C API on a tiny graph: cgraph_enqueue + cgraph_event_wait
 * (+ release) in a loop, the same host array bound each time. Prints one line:
 * `c_api_us_per_run <mean microseconds>`. Usage: bench_capi_overhead TINY.cgf [RUNS] */
#include "cgraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int check(cgraph_status st, const char *what) {
  if (st == CGRAPH_OK) return 0;
  fprintf(stderr, "bench_capi_overhead: error: %s: %s\n", what, cgraph_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_capi_overhead TINY.cgf [RUNS]\n");
    return 2;
  }
  const long runs = argc > 2 ? atol(argv[2]) : 20000;
  cgraph_graph g;
  cgraph_device cpu;
  cgraph_executable exe;
  cgraph_bindings b;
  if (check(cgraph_graph_load(argv[1], &g), "load") ||
      check(cgraph_device_open("cpu", &cpu), "device") ||
      check(cgraph_finalize(cpu, g, NULL, &exe), "finalize") ||
      check(cgraph_bindings_create(exe, &b), "bindings"))
    return 1;
  static float y[64] __attribute__((aligned(64)));
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) { /* best of three, after a warm-up */
    double t0 = 0;
    for (long i = -1000; i < runs; ++i) {
      if (i == 0) t0 = now_us();
      cgraph_event ev;
      if (check(cgraph_bind_host(b, 0, y, sizeof y), "bind") ||
          check(cgraph_set_param_float(b, 0, 1.0), "param") ||
          check(cgraph_enqueue(exe, b, &ev), "enqueue") || check(cgraph_event_wait(ev), "wait"))
        return 1;
      cgraph_event_release(ev);
    }
    const double per = (now_us() - t0) / runs;
    if (per < best) best = per;
  }
  /* Every submission ran: y[i] was incremented once per submission. */
  const float expected = 3.0f * (float)(runs + 1000);
  if (y[0] != expected || y[63] != expected) {
    fprintf(stderr, "bench_capi_overhead: error: y[0] is %g after %g submissions\n", y[0],
            expected);
    return 1;
  }
  printf("c_api_us_per_run %.3f\n", best);
  cgraph_bindings_release(b);
  cgraph_executable_release(exe);
  cgraph_device_release(cpu);
  cgraph_graph_release(g);
  return 0;
}
