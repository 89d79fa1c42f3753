/* Lost messages and pending sends at MPI_Finalize (issue 29, item 4),
 * for scripts/check-lost-tests.sh: argv[1] names the scenario. Rank 0
 * sends to the last rank, which never receives (except in "correct").
 *   send     MPI_Send of 4 MPI_INT, tag 7 (eager size)
 *   bsend    MPI_Bsend of 3 MPI_DOUBLE, tag 8
 *   pending  MPI_Isend of 2 MPI_INT, tag 9, never waited
 *   many     COUNT (argv[2], default 1000) MPI_Send of 1 MPI_INT, tag 3
 *   dup      MPI_Send of 5 MPI_SHORT, tag 4, on a duplicate named "mydup"
 *   derived  COUNT (argv[2], default 1) MPI_Send of 2 x a vector of 3
 *            MPI_INT, tag 5
 *   freed    as dup, the duplicate freed before MPI_Finalize
 *   correct  every message received, every request completed (or freed):
 *            prints "lost-correct: checksum N" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = argc > 1 ? argv[1] : "correct";
    int last = size - 1;
    int a[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    double d[3] = {1.5, 2.5, 3.5};
    short h[5] = {1, 2, 3, 4, 5};
    MPI_Request req = MPI_REQUEST_NULL;
    if (!strcmp(s, "send")) {
        if (rank == 0) MPI_Send(a, 4, MPI_INT, last, 7, MPI_COMM_WORLD);
    } else if (!strcmp(s, "bsend")) {
        int n = 0;
        MPI_Pack_size(3, MPI_DOUBLE, MPI_COMM_WORLD, &n);
        n += MPI_BSEND_OVERHEAD;
        void *buf = malloc(n);
        MPI_Buffer_attach(buf, n);
        if (rank == 0) MPI_Bsend(d, 3, MPI_DOUBLE, last, 8, MPI_COMM_WORLD);
        /* No detach: it would wait for the message to leave, which it may
         * (the receiver never takes it). */
    } else if (!strcmp(s, "pending")) {
        if (rank == 0) MPI_Isend(a, 2, MPI_INT, last, 9, MPI_COMM_WORLD, &req);
    } else if (!strcmp(s, "many")) {
        int count = argc > 2 ? atoi(argv[2]) : 1000;
        if (rank == 0)
            for (int i = 0; i < count; i++) MPI_Send(a, 1, MPI_INT, last, 3, MPI_COMM_WORLD);
    } else if (!strcmp(s, "derived")) {
        MPI_Datatype v;
        MPI_Type_vector(3, 1, 2, MPI_INT, &v);
        MPI_Type_commit(&v);
        int count = argc > 2 ? atoi(argv[2]) : 1;
        if (rank == 0)
            for (int i = 0; i < count; i++) MPI_Send(a, 2, v, last, 5, MPI_COMM_WORLD);
        MPI_Type_free(&v);
    } else if (!strcmp(s, "dup") || !strcmp(s, "freed")) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_set_name(c, "mydup");
        if (rank == 0) MPI_Send(h, 5, MPI_SHORT, last, 4, c);
        MPI_Barrier(c);
        if (!strcmp(s, "freed")) MPI_Comm_free(&c);
    } else {
        /* correct: a ring of blocking and nonblocking messages, a freed
         * send request, a duplicate freed, MPI_COMM_SELF. */
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        int sum = 0, in[4];
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        for (int i = 0; i < 50; i++) {
            MPI_Request r[2];
            MPI_Irecv(in, 4, MPI_INT, prev, i, c, &r[0]);
            MPI_Isend(a, 4, MPI_INT, next, i, c, &r[1]);
            MPI_Status sts[2];
            MPI_Waitall(2, r, sts);
            sum += in[i % 4];
            MPI_Sendrecv(a, 2, MPI_INT, next, 100, in, 2, MPI_INT, prev, 100, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            sum += in[1];
        }
        MPI_Request f;
        MPI_Isend(a, 1, MPI_INT, next, 200, MPI_COMM_WORLD, &f);
        MPI_Request_free(&f);
        MPI_Recv(in, 1, MPI_INT, prev, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += in[0];
        MPI_Request me;
        MPI_Isend(a, 1, MPI_INT, 0, 400, MPI_COMM_SELF, &me);
        MPI_Recv(in, 1, MPI_INT, 0, 400, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        MPI_Wait(&me, MPI_STATUS_IGNORE);
        sum += in[0];
        MPI_Comm_free(&c);
        MPI_Barrier(MPI_COMM_WORLD);
        int total = 0;
        MPI_Reduce(&sum, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("lost-correct: checksum %d\n", total);
    }
    (void)req;
    MPI_Finalize();
    if (rank == 0 && strcmp(s, "correct")) printf("lost: %s: after MPI_Finalize\n", s);
    return 0;
}
