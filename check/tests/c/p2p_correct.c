/* Correct point-to-point programs over every path the checker wraps:
 * with MPIX_CHECK_P2P=1 they must print no report and the same results
 * as without the checker (scripts/check-p2p-tests.sh compares the
 * "p2p-correct:" lines). Any number of ranks >= 2. */
/* gcc misreads MPICH's MPI_STATUSES_IGNORE as a zero-length array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long checksum = 0;

static void add(const void *p, int bytes) {
    const unsigned char *b = p;
    for (int i = 0; i < bytes; i++) checksum = (checksum * 31 + b[i]) % 1000000007L;
}

static void status_sum(const MPI_Status *st, MPI_Datatype t) {
    int n;
    MPI_Get_count(st, t, &n);
    checksum = (checksum * 7 + st->MPI_SOURCE * 1000 + st->MPI_TAG * 10 + n) % 1000000007L;
}

static void quiet_handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int ints[64], in[64];
    double dbl[64], din[64];
    for (int i = 0; i < 64; i++) {
        ints[i] = rank * 100 + i;
        dbl[i] = rank + i / 4.0;
    }
    MPI_Status st;

    /* 1. Blocking modes around a ring, Sendrecv, and a legal prefix: 3
     * ints into a receive of 10. */
    if (rank % 2 == 0) {
        MPI_Send(ints, 3, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Recv(in, 10, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(in, 10, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
        MPI_Send(ints, 3, MPI_INT, right, 1, MPI_COMM_WORLD);
    }
    status_sum(&st, MPI_INT);
    add(in, 3 * sizeof(int));
    MPI_Sendrecv(dbl, 5, MPI_DOUBLE, right, 2, din, 5, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &st);
    status_sum(&st, MPI_DOUBLE);
    add(din, 5 * sizeof(double));
    if (rank == 0) {
        MPI_Ssend(ints, 2, MPI_INT, size - 1, 3, MPI_COMM_WORLD);
    } else if (rank == size - 1) {
        MPI_Recv(in, 2, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        add(in, 2 * sizeof(int));
    }
    {
        int bsize = 4096 + MPI_BSEND_OVERHEAD;
        char *bbuf = malloc(bsize);
        MPI_Buffer_attach(bbuf, bsize);
        MPI_Bsend(dbl, 4, MPI_DOUBLE, right, 4, MPI_COMM_WORLD);
        MPI_Recv(din, 4, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &st);
        add(din, 4 * sizeof(double));
        MPI_Buffer_detach(&bbuf, &bsize);
        free(bbuf);
    }
    {
        MPI_Request r;
        MPI_Irecv(in, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Rsend(ints, 4, MPI_INT, right, 5, MPI_COMM_WORLD);
        MPI_Wait(&r, &st);
        status_sum(&st, MPI_INT);
        add(in, 4 * sizeof(int));
    }

    /* 2. MPI_PROC_NULL. */
    MPI_Send(ints, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Recv(in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    status_sum(&st, MPI_INT);

    /* 3. Derived types: a vector of ints received as contiguous ints, a
     * struct received as its members, MPI_BYTE as MPI_BYTE, MPI_PACKED
     * received as ints. */
    {
        MPI_Datatype v, s;
        MPI_Type_vector(4, 1, 2, MPI_INT, &v);
        MPI_Type_commit(&v);
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, bl, d, ty, &s);
        MPI_Type_commit(&s);
        double sbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        MPI_Request r[2];
        MPI_Isend(ints, 1, v, right, 6, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(sbuf, 2, s, right, 7, MPI_COMM_WORLD, &r[1]);
        MPI_Recv(in, 4, MPI_INT, left, 6, MPI_COMM_WORLD, &st);
        add(in, 4 * sizeof(int));
        MPI_Recv(din, 2, s, left, 7, MPI_COMM_WORLD, &st);
        status_sum(&st, s);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        MPI_Type_free(&v);
        MPI_Type_free(&s);
        MPI_Sendrecv(ints, 8, MPI_BYTE, right, 8, in, 8, MPI_BYTE, left, 8, MPI_COMM_WORLD, &st);
        add(in, 8);
        char packed[256];
        int pos = 0;
        MPI_Pack(ints, 3, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD);
        MPI_Sendrecv(packed, pos, MPI_PACKED, right, 9, in, 3, MPI_INT, left, 9, MPI_COMM_WORLD,
                     &st);
        add(in, 3 * sizeof(int));
    }

    /* 4. Receives completed out of posting order, with wildcards and
     * interleaved tags: rank 0 sends each other rank an int on tag 10, a
     * double on tag 10, then 2 ints on tag 11; the receiver posts
     * (any tag) int, (tag 10) double, (tag 11) 2 ints and completes them
     * in reverse, then again with Waitany / Testsome. */
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            for (int j = 1; j < size; j++) {
                MPI_Send(ints, 1, MPI_INT, j, 10, MPI_COMM_WORLD);
                MPI_Send(dbl, 1, MPI_DOUBLE, j, 10, MPI_COMM_WORLD);
                MPI_Send(ints, 2, MPI_INT, j, 11, MPI_COMM_WORLD);
            }
        } else {
            MPI_Request r[3];
            MPI_Status sts[3];
            MPI_Irecv(in, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(din, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &r[1]);
            MPI_Irecv(in + 8, 2, MPI_INT, 0, 11, MPI_COMM_WORLD, &r[2]);
            if (round == 0) {
                for (int k = 2; k >= 0; k--) {
                    MPI_Wait(&r[k], &sts[k]);
                    status_sum(&sts[k], MPI_BYTE);
                }
            } else if (round == 1) {
                for (int k = 0; k < 3; k++) {
                    int idx;
                    MPI_Waitany(3, r, &idx, &st);
                    status_sum(&st, MPI_BYTE);
                }
            } else {
                int done = 0, flag = 0;
                while (done < 3) {
                    int out, idx[3];
                    MPI_Testsome(3, r, &out, idx, sts);
                    if (out != MPI_UNDEFINED) done += out;
                }
                while (!flag) MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE);
            }
            add(in, sizeof(int));
            add(din, sizeof(double));
            add(in + 8, 2 * sizeof(int));
        }
    }

    /* (rank 0 must not run ahead: section 4's "any tag" receives would take its next messages) */
    MPI_Barrier(MPI_COMM_WORLD);

    /* 5. Probe then receive what was probed; Iprobe; Test. */
    {
        MPI_Request r;
        MPI_Isend(dbl, 6, MPI_DOUBLE, right, 12, MPI_COMM_WORLD, &r);
        int n, flag = 0;
        MPI_Probe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &n);
        MPI_Recv(din, n, MPI_DOUBLE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        add(din, n * sizeof(double));
        while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        MPI_Issend(ints, 2, MPI_INT, right, 13, MPI_COMM_WORLD, &r);
        flag = 0;
        while (!flag) MPI_Iprobe(left, 13, MPI_COMM_WORLD, &flag, &st);
        MPI_Request q;
        MPI_Irecv(in, 2, MPI_INT, left, 13, MPI_COMM_WORLD, &q);
        flag = 0;
        while (!flag) MPI_Test(&q, &flag, &st);
        status_sum(&st, MPI_INT);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        add(in, 2 * sizeof(int));
    }

    /* 6. A communicator of its own (split by parity) and a duplicate. */
    {
        MPI_Comm half, dup;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        int hr, hs;
        MPI_Comm_rank(half, &hr);
        MPI_Comm_size(half, &hs);
        MPI_Sendrecv(ints, 2, MPI_INT, (hr + 1) % hs, 0, in, 2, MPI_INT, (hr + hs - 1) % hs, 0,
                     half, &st);
        add(in, 2 * sizeof(int));
        MPI_Request r;
        MPI_Ibsend(dbl, 0, MPI_DOUBLE, MPI_PROC_NULL, 0, dup, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Irsend(dbl, 0, MPI_DOUBLE, MPI_PROC_NULL, 0, dup, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Sendrecv(dbl, 1, MPI_DOUBLE, right, 0, din, 1, MPI_DOUBLE, left, 0, dup, &st);
        add(din, sizeof(double));
        MPI_Comm_free(&half);
        MPI_Comm_free(&dup);
    }

    /* 7. Sendrecv_replace; matched probes (Mprobe/Mrecv, Improbe/Imrecv)
     * between ordinary receives of the same (source, tag). */
    {
        int rep[4] = {rank, rank + 1, rank + 2, rank + 3};
        MPI_Sendrecv_replace(rep, 4, MPI_INT, right, 14, left, 14, MPI_COMM_WORLD, &st);
        status_sum(&st, MPI_INT);
        add(rep, sizeof rep);
        MPI_Request r[3];
        MPI_Isend(ints, 1, MPI_INT, right, 15, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(dbl, 2, MPI_DOUBLE, right, 15, MPI_COMM_WORLD, &r[1]);
        MPI_Isend(ints, 3, MPI_INT, right, 15, MPI_COMM_WORLD, &r[2]);
        MPI_Message m;
        MPI_Mprobe(left, 15, MPI_COMM_WORLD, &m, &st);
        MPI_Request q;
        MPI_Irecv(din, 2, MPI_DOUBLE, left, 15, MPI_COMM_WORLD, &q); /* the 2nd message */
        MPI_Mrecv(in, 1, MPI_INT, &m, &st);                          /* the 1st */
        status_sum(&st, MPI_INT);
        MPI_Wait(&q, &st);
        add(din, 2 * sizeof(double));
        int flag = 0;
        while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 15, MPI_COMM_WORLD, &flag, &m, &st);
        MPI_Imrecv(in + 4, 3, MPI_INT, &m, &q);
        MPI_Wait(&q, &st);
        status_sum(&st, MPI_INT);
        add(in, 7 * sizeof(int));
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(in, 1, MPI_INT, &m, &st);
    }

    /* 8. Persistent requests, started 3 times (Start and Startall); a
     * derived send type freed while its request lives. */
    {
        MPI_Datatype v;
        MPI_Type_vector(2, 1, 2, MPI_INT, &v);
        MPI_Type_commit(&v);
        MPI_Request r[3];
        MPI_Send_init(ints, 1, v, right, 16, MPI_COMM_WORLD, &r[0]);
        MPI_Type_free(&v);
        MPI_Recv_init(in, 4, MPI_INT, left, 16, MPI_COMM_WORLD, &r[1]);
        MPI_Ssend_init(dbl, 1, MPI_DOUBLE, MPI_PROC_NULL, 16, MPI_COMM_WORLD, &r[2]);
        for (int k = 0; k < 3; k++) {
            if (k == 0) {
                MPI_Start(&r[1]);
                MPI_Start(&r[0]);
                MPI_Start(&r[2]);
            } else {
                MPI_Startall(3, r);
            }
            MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
            add(in, 2 * sizeof(int));
        }
        for (int k = 0; k < 3; k++) MPI_Request_free(&r[k]);
    }

    /* 9. A cancelled receive leaves the order intact. */
    {
        MPI_Request q;
        int flag;
        MPI_Irecv(in, 1, MPI_INT, left, 99, MPI_COMM_WORLD, &q); /* nobody sends tag 99 */
        MPI_Cancel(&q);
        MPI_Wait(&q, &st);
        MPI_Test_cancelled(&st, &flag);
        if (!flag) fprintf(stderr, "p2p-correct: the receive was not cancelled\n");
        MPI_Sendrecv(ints, 2, MPI_INT, right, 17, in, 2, MPI_INT, left, 17, MPI_COMM_WORLD, &st);
        add(in, 2 * sizeof(int));
    }

    /* 10. A legal prefix of a 10^9-element derived type: checked in
     * microseconds (the prefix's hash from the type's tree). */
    {
        MPI_Datatype huge;
        MPI_Type_vector(1000000, 1000, 1000, MPI_INT, &huge);
        MPI_Type_commit(&huge);
        double t0 = MPI_Wtime();
        MPI_Sendrecv(ints, 3, MPI_INT, right, 18, in, 1, huge, left, 18, MPI_COMM_WORLD, &st);
        double us = (MPI_Wtime() - t0) * 1e6;
        if (rank == 0) fprintf(stderr, "huge-type receive: %.1f us\n", us);
        status_sum(&st, MPI_INT);
        add(in, 3 * sizeof(int));
        MPI_Type_free(&huge);
    }

    /* 11. A cancelled send: whether MPI cancels it or not, the next
     * message on the same (communicator, tag) is checked against its own
     * companion. The sender tells the receiver how many to expect. */
    {
        int flag = 0, n;
        MPI_Request q;
        MPI_Isend(dbl, 2, MPI_DOUBLE, right, 21, MPI_COMM_WORLD, &q);
        MPI_Cancel(&q);
        MPI_Wait(&q, &st);
        MPI_Test_cancelled(&st, &flag);
        n = flag ? 0 : 1;
        MPI_Send(&n, 1, MPI_INT, right, 22, MPI_COMM_WORLD);
        MPI_Send(ints, 4, MPI_INT, right, 21, MPI_COMM_WORLD);
        MPI_Recv(&n, 1, MPI_INT, left, 22, MPI_COMM_WORLD, &st);
        if (n) {
            MPI_Recv(din, 2, MPI_DOUBLE, left, 21, MPI_COMM_WORLD, &st);
            add(din, 2 * sizeof(double));
        }
        MPI_Recv(in, 4, MPI_INT, left, 21, MPI_COMM_WORLD, &st);
        add(in, 4 * sizeof(int));
    }

    /* 12. An active receive freed (MPI still completes it), then more
     * messages on its (source, tag): each later one is checked against
     * its own companion (the freed receive's buffer is not read: MPI
     * does not say when its data lands). */
    {
        MPI_Request q;
        static int got[2];
        MPI_Irecv(got, 2, MPI_INT, left, 23, MPI_COMM_WORLD, &q);
        MPI_Request_free(&q);
        MPI_Send(ints, 2, MPI_INT, right, 23, MPI_COMM_WORLD);
        MPI_Send(dbl, 3, MPI_DOUBLE, right, 23, MPI_COMM_WORLD);
        MPI_Recv(din, 3, MPI_DOUBLE, left, 23, MPI_COMM_WORLD, &st);
        add(din, 3 * sizeof(double));
    }

    /* 13. An active receive with a wildcard freed: checks on the world
     * stop, without a report or a wait. A duplicate keeps its own. */
    {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Request q;
        static int got;
        MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 24, c, &q);
        MPI_Request_free(&q);
        MPI_Send(ints, 1, MPI_INT, right, 24, c);
        MPI_Sendrecv(ints, 5, MPI_INT, right, 24, in, 5, MPI_INT, left, 24, c, &st);
        add(in, 5 * sizeof(int));
        status_sum(&st, MPI_INT);
        MPI_Sendrecv(dbl, 2, MPI_DOUBLE, right, 25, din, 2, MPI_DOUBLE, left, 25, c, &st);
        add(din, 2 * sizeof(double));
        MPI_Comm_free(&c);
    }

    /* 14. Point-to-point on an intercommunicator (even ranks against odd
     * ones; ranks name the remote group), a wildcard receive there, and
     * the intracommunicator Intercomm_merge makes of it. */
    if (size % 2 == 0) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 26, &inter);
        int hr;
        MPI_Comm_rank(half, &hr);
        MPI_Sendrecv(dbl, 2, MPI_DOUBLE, hr, 27, din, 2, MPI_DOUBLE, hr, 27, inter, &st);
        add(din, 2 * sizeof(double));
        status_sum(&st, MPI_DOUBLE);
        MPI_Request q;
        MPI_Irecv(in, 3, MPI_INT, MPI_ANY_SOURCE, 28, inter, &q);
        MPI_Send(ints, 3, MPI_INT, hr, 28, inter);
        MPI_Wait(&q, &st);
        add(in, 3 * sizeof(int));
        MPI_Comm merged;
        int mr, ms;
        MPI_Intercomm_merge(inter, rank % 2, &merged);
        MPI_Comm_rank(merged, &mr);
        MPI_Comm_size(merged, &ms);
        MPI_Sendrecv(ints, 2, MPI_INT, (mr + 1) % ms, 29, in, 2, MPI_INT, (mr + ms - 1) % ms, 29,
                     merged, &st);
        status_sum(&st, MPI_INT);
        add(in, 2 * sizeof(int));
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* 14b. Communicators from MPI_Cart_sub, MPI_Dist_graph_create_adjacent
     * and MPI_Comm_create_group: a ring on each. */
    {
        int dims[2] = {size, 1}, periods[2] = {1, 0}, remain[2] = {1, 0}, one = 1;
        MPI_Comm cart, sub, graph, grp;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
        MPI_Cart_sub(cart, remain, &sub);
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &one, 1, &right, &one,
                                       MPI_INFO_NULL, 0, &graph);
        MPI_Group world_group;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 5, &grp);
        MPI_Group_free(&world_group);
        MPI_Comm cs[3] = {sub, graph, grp};
        for (int k = 0; k < 3; k++) {
            int r, n;
            MPI_Comm_rank(cs[k], &r);
            MPI_Comm_size(cs[k], &n);
            MPI_Sendrecv(ints, 3, MPI_INT, (r + 1) % n, 50 + k, in, 3, MPI_INT, MPI_ANY_SOURCE,
                         50 + k, cs[k], &st);
            status_sum(&st, MPI_INT);
            add(in, 3 * sizeof(int));
        }
        MPI_Comm_free(&grp);
        MPI_Comm_free(&graph);
        MPI_Comm_free(&sub);
        MPI_Comm_free(&cart);
    }

    /* 15. The MPI-4 large-count forms: blocking, nonblocking, persistent,
     * Sendrecv, MPI_Isendrecv(_replace) and a matched probe. */
#if MPI_VERSION >= 4
    {
        MPI_Request q[2];
        MPI_Count four = 4;
        MPI_Send_c(ints, four, MPI_INT, right, 30, MPI_COMM_WORLD);
        MPI_Recv_c(in, 10, MPI_INT, left, 30, MPI_COMM_WORLD, &st);
        add(in, 4 * sizeof(int));
        MPI_Irecv_c(din, 2, MPI_DOUBLE, left, 31, MPI_COMM_WORLD, &q[0]);
        MPI_Isend_c(dbl, 2, MPI_DOUBLE, right, 31, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        add(din, 2 * sizeof(double));
        MPI_Recv_init_c(in, 3, MPI_INT, left, 32, MPI_COMM_WORLD, &q[0]);
        MPI_Send_init_c(ints, 3, MPI_INT, right, 32, MPI_COMM_WORLD, &q[1]);
        for (int k = 0; k < 2; k++) {
            MPI_Startall(2, q);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            add(in, 3 * sizeof(int));
        }
        MPI_Request_free(&q[0]);
        MPI_Request_free(&q[1]);
        MPI_Sendrecv_c(ints, 5, MPI_INT, right, 33, in, 5, MPI_INT, left, 33, MPI_COMM_WORLD, &st);
        add(in, 5 * sizeof(int));
        MPI_Message m;
        MPI_Isendrecv(ints, 2, MPI_INT, right, 35, in, 6, MPI_INT, left, 35, MPI_COMM_WORLD, &q[0]);
        /* Its status is not read: MPICH 4.0 leaves it unset. */
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        add(in, 2 * sizeof(int));
        {
            /* With a wildcard: unchecked from then on, on that communicator. */
            MPI_Comm c;
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
            MPI_Isendrecv(ints, 2, MPI_INT, right, 37, in, 2, MPI_INT, MPI_ANY_SOURCE, 37, c, &q[0]);
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            add(in, 2 * sizeof(int));
            MPI_Sendrecv(dbl, 2, MPI_DOUBLE, right, 38, din, 2, MPI_DOUBLE, left, 38, c, &st);
            add(din, 2 * sizeof(double));
            MPI_Comm_free(&c);
        }
        memcpy(in, ints, 3 * sizeof(int));
        MPI_Isendrecv_replace_c(in, 3, MPI_INT, right, 36, left, 36, MPI_COMM_WORLD, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        add(in, 3 * sizeof(int));
        MPI_Issend_c(dbl, 1, MPI_DOUBLE, right, 34, MPI_COMM_WORLD, &q[1]);
        MPI_Mprobe(left, 34, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv_c(din, 1, MPI_DOUBLE, &m, &st);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        add(din, sizeof(double));
    }
#endif

#if MPI_VERSION >= 4 || defined(MPICH_NUMVERSION) || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    /* Partitioned communication (MPI 4; not in Open MPI 4) on a checked
     * communicator, between regular messages of the same tag received with
     * MPI_ANY_TAG: a partitioned message matches only a partitioned receive,
     * so it needs no companion and the regular messages' stay paired. */
    {
        MPI_Request ps, pr;
        int parts[32], pin[32];
        for (int i = 0; i < 32; i++) parts[i] = rank * 1000 + i;
        MPI_Send(ints, 2, MPI_INT, right, 40, MPI_COMM_WORLD);
        MPI_Recv(in, 2, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        status_sum(&st, MPI_INT);
        MPI_Psend_init(parts, 4, 8, MPI_INT, right, 40, MPI_COMM_WORLD, MPI_INFO_NULL, &ps);
        MPI_Precv_init(pin, 4, 8, MPI_INT, left, 40, MPI_COMM_WORLD, MPI_INFO_NULL, &pr);
        for (int k = 0; k < 2; k++) {
            MPI_Start(&pr);
            MPI_Start(&ps);
            for (int p = 0; p < 4; p++) MPI_Pready(p, ps);
            MPI_Wait(&ps, MPI_STATUS_IGNORE);
            MPI_Wait(&pr, MPI_STATUS_IGNORE);
            add(pin, sizeof pin);
        }
        MPI_Request_free(&ps);
        MPI_Request_free(&pr);
        MPI_Send(dbl, 3, MPI_DOUBLE, right, 40, MPI_COMM_WORLD);
        MPI_Recv(din, 3, MPI_DOUBLE, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        status_sum(&st, MPI_DOUBLE);
        add(din, 3 * sizeof(double));
        if (rank == 0) printf("p2p-correct: partitioned exchanges 2\n");
    }
#endif
    {
        /* Error handlers (issue 29: the checker installs its own on checked
         * communicators): MPI_Comm_get_errhandler gives what the program set,
         * a freed user handler stays usable on its communicators, and a
         * communicator made from one inherits it. */
        MPI_Errhandler eh, got, u;
        MPI_Comm c, d;
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
        int fatal = eh == MPI_ERRORS_ARE_FATAL;
        MPI_Errhandler_free(&eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
        int ret = eh == MPI_ERRORS_RETURN;
        MPI_Errhandler_free(&eh);
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_create_errhandler(quiet_handler, &u);
        MPI_Comm_set_errhandler(c, u);
        MPI_Comm_get_errhandler(c, &got);
        int user = got == u;
        MPI_Errhandler_free(&got);
        MPI_Comm_split(c, 0, rank, &d);
        MPI_Comm_get_errhandler(d, &got);
        int inherited = got == u;
        MPI_Errhandler_free(&got);
        MPI_Errhandler_free(&u);
        MPI_Sendrecv(ints, 2, MPI_INT, right, 40, in, 4, MPI_INT, left, 40, d, &st);
        status_sum(&st, MPI_INT);
        MPI_Comm_free(&d);
        MPI_Comm_free(&c);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        if (rank == 0)
            printf("p2p-correct: error handlers as set: %d %d %d %d\n", fatal, ret, user, inherited);
    }

    long all = 0;
    MPI_Reduce(&checksum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("p2p-correct: checksum %ld\n", all);
    MPI_Finalize();
    return 0;
}
