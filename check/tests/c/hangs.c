/* Point-to-point hangs for mpix-check's watchdog (scripts/check-hang-tests.sh):
 * each scenario (argv[1]) hangs for ever without the checker, except
 * "computing", "inside_computing" and "inactive_wait", correct programs
 * (the first two compute (sleep) longer than the timeout between calls).
 * The persistent collectives' scenarios are left out where mpi.h has
 * none (Open MPI 5.0 has them but says MPI 3.1). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size, buf[4] = {0}, out[4] = {1, 2, 3, 4};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = argc > 1 ? argv[1] : "";
    int next = (rank + 1) % size, pair = rank ^ 1;
    if (!strcmp(s, "recv_ring")) {
        /* every rank receives from the next one first: a cycle */
        MPI_Recv(buf, 1, MPI_INT, next, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    } else if (!strcmp(s, "probe_probe")) {
        MPI_Status st;
        if (pair < size) MPI_Probe(pair, 0, MPI_COMM_WORLD, &st);
    } else if (!strcmp(s, "ssend_ssend")) {
        if (pair < size) {
            MPI_Ssend(out, 1, MPI_INT, pair, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 1, MPI_INT, pair, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(s, "other_comm")) {
        /* the send on a duplicate, its receive on MPI_COMM_WORLD */
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_set_name(dup, "the_dup");
        if (rank == 1) MPI_Send(out, 1, MPI_INT, 0, 0, dup);
        if (rank == 0) MPI_Recv(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_free(&dup);
    } else if (!strcmp(s, "wrong_tag")) {
        if (rank == 1) MPI_Send(out, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(buf, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "skipped_send")) {
        /* rank 1 forgets its send and finalizes; rank 0 waits for it */
        if (rank == 0) MPI_Recv(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "irecv_wait")) {
        MPI_Request r;
        if (pair < size) {
            MPI_Irecv(buf, 1, MPI_INT, pair, 3, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Send(out, 1, MPI_INT, pair, 3, MPI_COMM_WORLD);
        }
    } else if (!strcmp(s, "computing")) {
        /* correct: rank 1 computes 5 s before its message */
        for (int i = 0; i < 1; i++) {
            if (rank == 1) {
                sleep(5);
                MPI_Send(out, 4, MPI_INT, 0, i, MPI_COMM_WORLD);
            } else if (rank == 0) {
                MPI_Recv(buf, 4, MPI_INT, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) printf("computing: done %d\n", buf[3]);
    } else if (!strcmp(s, "inside_computing")) {
        /* correct: rank 0 waits for rank 1, which waits in a barrier of
         * ranks 1.. for rank 2, which computes 5 s first */
        MPI_Comm rest;
        MPI_Comm_split(MPI_COMM_WORLD, rank > 0 ? 1 : MPI_UNDEFINED, rank, &rest);
        if (rank == 0) MPI_Recv(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 2) sleep(5);
        if (rank > 0) MPI_Barrier(rest);
        if (rank == 1) MPI_Send(out, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
        if (rank > 0) MPI_Comm_free(&rest);
        if (rank == 0) printf("inside_computing: done %d\n", buf[3]);
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    } else if (!strcmp(s, "unstarted") || !strcmp(s, "unstarted_barrier")) {
        /* rank 0 starts a persistent collective the others never start:
         * they wait for rank 0's message after it, or in a barrier */
        int in = 1, sum = 0;
        MPI_Request r;
        MPI_Allreduce_init(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        if (rank == 0) {
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            for (int i = 1; i < size; i++) MPI_Send(&sum, 1, MPI_INT, i, 0, MPI_COMM_WORLD);
        } else if (!strcmp(s, "unstarted")) {
            MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Request_free(&r);
    } else if (!strcmp(s, "inactive_wait")) {
        /* correct: a wait on a persistent collective request never
         * started returns at once (MPI-4.1 3.7.3: an inactive request) */
        int v = rank;
        MPI_Request r;
        MPI_Bcast_init(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Request_free(&r);
        printf("inactive_wait: done\n");
#endif
    } else {
        if (rank == 0) fprintf(stderr, "unknown scenario '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
