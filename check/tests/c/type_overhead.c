/* The cost of mpix-check's datatype checks per call (issue 30; a
 * benchmark, not a test): one process sends to and receives from
 * MPI_PROC_NULL in a loop, so that no message and no wait is timed, only
 * the call and what the checker does around it. Types: MPI_BYTE and a
 * committed vector; each before any type is freed (the registry of types
 * has nothing to report: one atomic load) and after one was (a look-up in
 * the thread's handles found usable). Prints lines
 *   calls LABEL CALL TYPE REGISTRY NS_PER_CALL
 * scripts/check-p2p-bench.sh runs it with the checker, with
 * MPIX_CHECK_TYPES=0 and without the checker, and prints the differences.
 * Usage: type_overhead LABEL */
#include <mpi.h>
#include <stdio.h>

#define CALLS 400000

static double per_call(int recv, MPI_Datatype t) {
    char buf[64];
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < CALLS; i++) {
            if (recv)
                MPI_Recv(buf, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(buf, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        }
        double dt = (MPI_Wtime() - t0) / CALLS;
        if (dt < best) best = dt;
    }
    return best * 1e9;
}

static void run(const char *label, const char *registry, MPI_Datatype v) {
    const char *calls[2] = {"MPI_Send", "MPI_Recv"};
    for (int recv = 0; recv < 2; recv++) {
        printf("calls %s %s byte %s %.1f\n", label, calls[recv], registry, per_call(recv, MPI_BYTE));
        printf("calls %s %s vector %s %.1f\n", label, calls[recv], registry, per_call(recv, v));
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *label = argc > 1 ? argv[1] : "run";
    MPI_Datatype v, gone;
    MPI_Type_vector(4, 1, 2, MPI_CHAR, &v);
    MPI_Type_commit(&v);
    run(label, "quiet", v);
    MPI_Type_contiguous(2, MPI_INT, &gone);
    MPI_Type_free(&gone);
    run(label, "after-free", v);
    MPI_Type_free(&v);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
