/* Point-to-point hangs for mpix-check's watchdog (scripts/check-hang-tests.sh):
 * each scenario (argv[1]) hangs for ever without the checker, except
 * "computing", a correct program whose ranks compute (sleep) longer than
 * the timeout between messages. */
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
    } else {
        if (rank == 0) fprintf(stderr, "unknown scenario '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
