/* The point-to-point checker's own work per message (issue 31; a
 * benchmark, not a test): one process sends 8-byte messages to itself,
 * so no peer and no waiting for one is timed, only the calls and what
 * the checker does around both ends of each message. Two patterns:
 *   window 1   MPI_Irecv, MPI_Send, MPI_Wait (a blocking send, a wait)
 *   window 64  64 x MPI_Irecv, 64 x MPI_Isend, one MPI_Waitall
 * and two types: MPI_BYTE x 8 and a committed vector of one double.
 * Prints lines
 *   self LABEL WINDOW TYPE NS_PER_MESSAGE
 * (best of 3 repetitions). scripts/check-p2p-bench.sh runs it without
 * the checker, with the point-to-point checks off, and in both
 * verification modes.
 * Usage: p2p_self LABEL */
#include <mpi.h>
#include <stdio.h>

#define MESSAGES 1000000
#define MAXW 64

static double per_message(int w, MPI_Datatype t, int count) {
    static double in[MAXW], out[MAXW];
    MPI_Request r[2 * MAXW];
    static MPI_Status st[2 * MAXW]; /* (MPICH's MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < MESSAGES / w; i++) {
            if (w == 1) {
                MPI_Irecv(in, count, t, 0, 2, MPI_COMM_WORLD, &r[0]);
                MPI_Send(out, count, t, 0, 2, MPI_COMM_WORLD);
                MPI_Wait(&r[0], MPI_STATUS_IGNORE);
                continue;
            }
            for (int k = 0; k < w; k++) MPI_Irecv(&in[k], count, t, 0, 2, MPI_COMM_WORLD, &r[k]);
            for (int k = 0; k < w; k++) MPI_Isend(&out[k], count, t, 0, 2, MPI_COMM_WORLD, &r[w + k]);
            MPI_Waitall(2 * w, r, st);
        }
        double dt = (MPI_Wtime() - t0) / ((double)(MESSAGES / w) * w);
        if (dt < best) best = dt;
    }
    return best * 1e9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *label = argc > 1 ? argv[1] : "run";
    MPI_Datatype vec;
    MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    int windows[2] = {1, MAXW};
    for (int i = 0; i < 2; i++) {
        printf("self %s %d byte %.1f\n", label, windows[i], per_message(windows[i], MPI_BYTE, 8));
        printf("self %s %d vector %.1f\n", label, windows[i], per_message(windows[i], vec, 1));
    }
    MPI_Type_free(&vec);
    MPI_Finalize();
    return 0;
}
