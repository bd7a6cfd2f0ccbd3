/* The reference for bench_allreduce.sh: MPI_Allreduce (sum, float, in place) of N floats
 * per rank, ITERS times after one warm-up; rank 0 prints the mean and minimum in ms. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long n = argc > 1 ? atol(argv[1]) : 16777216L;
  const int iters = argc > 2 ? atoi(argv[2]) : 20;
  float *buf = malloc((size_t)n * sizeof(float));
  for (long i = 0; i < n; ++i) buf[i] = (float)(i % 7);
  MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double sum = 0, best = 1e30;
  for (int k = 0; k < iters; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double ms = (MPI_Wtime() - t0) * 1e3;
    sum += ms;
    if (ms < best) best = ms;
  }
  if (rank == 0) printf("plain MPI_Allreduce: %ld floats, mean %.3f ms, min %.3f ms over %d\n", n, sum / iters, best, iters);
  free(buf);
  MPI_Finalize();
  return 0;
}
