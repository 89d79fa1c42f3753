/* Ping-pong between ranks 0 and 1 (a benchmark, not a test): the time of
 * one round trip of COUNT doubles, best of 5 runs of ITERS round trips.
 * Run with and without the checker (MPIX_CHECK_P2P=1) to see what the
 * point-to-point checks cost. Usage: p2p_pingpong [COUNT [ITERS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int count = argc > 1 ? atoi(argv[1]) : 1;
    int iters = argc > 2 ? atoi(argv[2]) : 10000;
    double *buf = calloc(count > 0 ? count : 1, sizeof(double));
    double best = 1e30;
    for (int run = 0; run < 5; run++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, count, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, count, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, count, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, count, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / iters;
        if (t < best) best = t;
    }
    if (rank == 0) printf("pingpong: %d doubles: %.2f us per round trip\n", count, best * 1e6);
    free(buf);
    MPI_Finalize();
    return 0;
}
