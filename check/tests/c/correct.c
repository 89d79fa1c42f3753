/* Correct programs for mpix-check: every wrapped call with legal variety.
 * Run with and without the checker: it checks its own results (exit 1 on
 * a wrong one) and prints one line of checksums, which must be the same
 * in both runs; under the checker, stderr must hold no report. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "rank %d: check failed at line %d: %s\n", rank, __LINE__, #cond); \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

static void isum(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long sum = 0;
    int a[256], b[256];

    /* Barrier; Bcast with equal signatures of different layouts: the root
     * sends a vector of 4 ints (stride 2), the others receive 4 MPI_INTs. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < 8; i++) a[i] = rank == 0 ? 10 + i : -1;
    if (rank == 0) MPI_Bcast(a, 1, vec, 0, MPI_COMM_WORLD);
    else MPI_Bcast(a, 4, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0) CHECK(a[0] == 10 && a[1] == 12 && a[2] == 14 && a[3] == 16);
    sum += a[3];

    /* contiguous(2, struct{int, double}) against a flat struct of 4 members */
    struct pair { int i; double d; } p2[2];
    MPI_Datatype st, c2, flat;
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint d2[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
    MPI_Datatype t2[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, d2, t2, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct pair), &c2);
    MPI_Type_free(&st);
    MPI_Datatype c2b;
    MPI_Type_contiguous(2, c2, &c2b);
    MPI_Type_commit(&c2b);
    MPI_Aint d4[4] = {0, 8, 16, 24};
    MPI_Datatype t4[4] = {MPI_INT, MPI_DOUBLE, MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(4, bl, d4, t4, &flat);
    MPI_Type_commit(&flat);
    if (rank == 0) p2[0].i = 7, p2[0].d = 1.5, p2[1].i = 8, p2[1].d = 2.5;
    MPI_Bcast(p2, 1, rank % 2 ? flat : c2b, 0, MPI_COMM_WORLD);
    CHECK(p2[1].i == 8 && p2[1].d == 2.5);
    MPI_Type_free(&c2b);
    MPI_Type_free(&c2);
    MPI_Type_free(&flat);

    /* MPI_PACKED at the root, ints elsewhere (same byte count) */
    char packbuf[64];
    int pos = 0, vals[3] = {1, 2, 3}, got[3] = {0};
    MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &pos);
    int psize = pos;
    pos = 0;
    if (rank == 0) {
        MPI_Pack(vals, 3, MPI_INT, packbuf, sizeof packbuf, &pos, MPI_COMM_WORLD);
        MPI_Bcast(packbuf, pos, MPI_PACKED, 0, MPI_COMM_WORLD);
    } else if (psize == 3 * (int)sizeof(int)) {
        MPI_Bcast(got, 3, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(got[2] == 3);
    } else {
        MPI_Bcast(packbuf, psize, MPI_PACKED, 0, MPI_COMM_WORLD);
    }

    /* Gather with MPI_IN_PLACE at the root; Gatherv; Scatter(v) */
    for (int i = 0; i < size; i++) b[i] = rank == 0 ? (i == 0 ? 100 : -1) : -1;
    a[0] = 100 + rank;
    MPI_Gather(rank == 0 ? MPI_IN_PLACE : a, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) for (int i = 0; i < size; i++) CHECK(b[i] == 100 + i);
    int counts[64], displs[64];
    for (int i = 0; i < size; i++) counts[i] = i + 1, displs[i] = i * (i + 1) / 2;
    for (int i = 0; i <= rank; i++) a[i] = rank;
    MPI_Gatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) { CHECK(b[displs[size - 1]] == size - 1); sum += b[displs[size - 1]]; }
    MPI_Scatterv(b, counts, displs, MPI_INT, a, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(a[rank] == rank);
    MPI_Scatter(b, 1, MPI_INT, rank == 0 ? MPI_IN_PLACE : a, 1, MPI_INT, 0, MPI_COMM_WORLD);

    /* Allgather in place everywhere; Allgatherv; Alltoall(v,w) */
    for (int i = 0; i < size; i++) b[i] = i == rank ? rank * 3 : -1;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(b[i] == 3 * i);
    for (int i = 0; i <= rank; i++) a[i] = rank;
    MPI_Allgatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD);
    CHECK(b[displs[size - 1]] == size - 1);
    for (int i = 0; i < size; i++) a[i] = rank * 10 + i;
    MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(b[i] == i * 10 + rank);
    int sc[64], sd[64], rc[64], rd[64];
    MPI_Datatype sts[64], rts[64];
    for (int i = 0; i < size; i++) sc[i] = rc[i] = 2, sd[i] = rd[i] = 2 * i, sts[i] = rts[i] = MPI_INT;
    for (int i = 0; i < 2 * size; i++) a[i] = rank;
    MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(b[2 * i + 1] == i);
    for (int i = 0; i < size; i++) sd[i] = rd[i] = 2 * i * (int)sizeof(int);
    /* Alltoallw: 2 ints sent as a contiguous pair, received as 2 MPI_INTs */
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    for (int i = 0; i < size; i++) sc[i] = 1, sts[i] = two;
    MPI_Alltoallw(a, sc, sd, sts, b, rc, rd, rts, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(b[2 * i] == i);
    MPI_Type_free(&two);

    /* Reductions: predefined, user op, pair type with MAXLOC, in place */
    int one = rank + 1, tot = 0;
    MPI_Reduce(&one, &tot, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) { CHECK(tot == size * (size + 1) / 2); sum += tot; }
    MPI_Op op;
    MPI_Op_create(isum, 1, &op);
    tot = rank + 1;
    MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_INT, op, MPI_COMM_WORLD);
    CHECK(tot == size * (size + 1) / 2);
    MPI_Op_free(&op);
    struct { int v, r; } in = {rank * 7 % 5, rank}, outp;
    MPI_Allreduce(&in, &outp, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    sum += outp.v + outp.r;
    for (int i = 0; i < size; i++) a[i] = 1;
    MPI_Reduce_scatter_block(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(b[0] == size);
    for (int i = 0; i < size; i++) counts[i] = 1;
    MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(b[0] == size);
    MPI_Scan(&one, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(tot == (rank + 1) * (rank + 2) / 2);
    tot = -1;
    MPI_Exscan(&one, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0) CHECK(tot == rank * (rank + 1) / 2);

    /* A large count: 2^26 elements of a derived type, hashed in O(1) */
    MPI_Datatype big;
    MPI_Type_contiguous(1 << 26, MPI_INT, &big);
    MPI_Type_commit(&big);
    MPI_Datatype big2;
    MPI_Type_contiguous(1 << 13, MPI_INT, &big2);
    MPI_Type_commit(&big2);
    double t0 = MPI_Wtime();
    /* count 0 of the big type on all ranks, but the signatures are compared anyway */
    MPI_Bcast(a, 0, rank % 2 ? big : big2, 0, MPI_COMM_WORLD);
    (void)t0;
    MPI_Type_free(&big);
    MPI_Type_free(&big2);

    /* Communicators: dup, split, create, cart, intercommunicator */
    MPI_Comm dup, half, cart, inter, merged;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hr;
    MPI_Comm_rank(half, &hr);
    one = 1;
    MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_SUM, half);
    CHECK(tot == (size + (rank % 2 ? 0 : 1)) / 2);
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Comm created;
    MPI_Comm_create(MPI_COMM_WORLD, g, &created);
    MPI_Group_free(&g);
    MPI_Barrier(created);
    MPI_Comm_free(&created);
    int dims[2] = {size, 1}, periods[2] = {1, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Bcast(a, 1, MPI_INT, 0, cart);
    MPI_Comm_free(&cart);
    if (size >= 2) {
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 42, &inter);
        int x = rank;
        MPI_Bcast(&x, 1, MPI_INT, rank == 0 ? MPI_ROOT : (rank % 2 ? 0 : MPI_PROC_NULL), inter);
        if (rank % 2) CHECK(x == 0);
        /* Intercommunicator collectives: the even group's local rank 0
         * (world rank 0) and the odd group's (world rank 1) take turns as
         * root; data crosses between the groups. */
        int rsize, lsize, even = rank % 2 == 0, iv[64], ov[64];
        MPI_Comm_size(inter, &lsize);
        MPI_Comm_remote_size(inter, &rsize);
        int root_even = rank == 0 ? MPI_ROOT : (even ? MPI_PROC_NULL : 0);
        int root_odd = rank == 1 ? MPI_ROOT : (even ? 0 : MPI_PROC_NULL);
        x = rank;
        MPI_Gather(&x, 1, MPI_INT, iv, 1, MPI_INT, root_even, inter);
        if (rank == 0) CHECK(iv[rsize - 1] == 2 * rsize - 1);
        for (int i = 0; i < rsize; i++) ov[i] = 100 + i;
        MPI_Scatter(ov, 1, MPI_INT, &x, 1, MPI_INT, root_odd, inter);
        if (even) CHECK(x == 100 + rank / 2);
        MPI_Reduce(&one, &tot, 1, MPI_INT, MPI_SUM, root_odd, inter);
        if (rank == 1) CHECK(tot == lsize * 0 + rsize);
        MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_SUM, inter);
        CHECK(tot == rsize);
        x = rank;
        MPI_Allgather(&x, 1, MPI_INT, iv, 1, MPI_INT, inter);
        CHECK(iv[0] == (even ? 1 : 0));
        for (int i = 0; i < rsize; i++) ov[i] = rank;
        MPI_Alltoall(ov, 1, MPI_INT, iv, 1, MPI_INT, inter);
        CHECK(iv[0] == (even ? 1 : 0));
        int rcounts[64], rdispls[64];
        for (int i = 0; i < rsize; i++) rcounts[i] = 1, rdispls[i] = i;
        MPI_Allgatherv(&x, 1, MPI_INT, iv, rcounts, rdispls, MPI_INT, inter);
        /* each group reduces rsize * 1... vectors: both groups' vectors have
         * size*1/2 elements only when the groups are equal; use one block
         * per local rank of a vector of equal length on both sides */
        if (lsize == rsize) {
            for (int i = 0; i < lsize; i++) ov[i] = 1;
            MPI_Reduce_scatter_block(ov, &x, 1, MPI_INT, MPI_SUM, inter);
            CHECK(x == rsize);
        }
        MPI_Request ireq;
        x = rank == 1 ? 9 : 0;
        MPI_Ibcast(&x, 1, MPI_INT, root_odd, inter, &ireq);
        MPI_Wait(&ireq, MPI_STATUS_IGNORE);
        if (even) CHECK(x == 9);
        MPI_Barrier(inter);
        MPI_Intercomm_merge(inter, rank % 2, &merged);
        MPI_Barrier(merged);
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
    }

    /* Nonblocking overlapped with point to point: rank 0 starts an Ibcast,
     * rank 1 sends to rank 0 before starting its own (legal; a blocking
     * check inside MPI_Ibcast would deadlock it). */
    MPI_Request req, reqs[4];
    MPI_Status stats[4];
    int v = rank == 0 ? 55 : 0, msg = 0;
    if (rank == 0) {
        MPI_Ibcast(&v, 1, MPI_INT, 0, dup, &req);
        MPI_Recv(&msg, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(msg == 77);
    } else {
        if (rank == 1) {
            msg = 77;
            MPI_Send(&msg, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        }
        MPI_Ibcast(&v, 1, MPI_INT, 0, dup, &req);
        int flag = 0;
        while (!flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    }
    CHECK(v == 55);
    one = rank;
    MPI_Iallreduce(&one, &tot, 1, MPI_INT, MPI_MAX, dup, &reqs[0]);
    MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_INT, dup, &reqs[1]);
    MPI_Ibarrier(dup, &reqs[2]);
    MPI_Igather(&one, 1, MPI_INT, b + 64, 1, MPI_INT, 0, dup, &reqs[3]);
    MPI_Waitall(4, reqs, stats);
    CHECK(tot == size - 1);
    MPI_Iscan(&one, &tot, 1, MPI_INT, MPI_SUM, dup, &reqs[0]);
    int idx, done = 0;
    MPI_Waitany(1, reqs, &idx, MPI_STATUS_IGNORE);
    CHECK(idx == 0 && tot == rank * (rank + 1) / 2);
    for (int i = 0; i < size; i++) counts[i] = 1, displs[i] = i;
    MPI_Iallgatherv(&one, 1, MPI_INT, b, counts, displs, MPI_INT, dup, &reqs[0]);
    MPI_Ireduce_scatter_block(a, &tot, 1, MPI_INT, MPI_SUM, dup, &reqs[1]);
    while (done < 2) {
        int outc, ind[2];
        MPI_Waitsome(2, reqs, &outc, ind, stats);
        done += outc;
    }
    CHECK(b[size - 1] == size - 1);

    /* Neighborhood collectives, each pair's signatures against the
     * topology: a periodic ring (with 2 ranks both neighbors are the same
     * rank: repeated edges), a non-periodic line (MPI_PROC_NULL ends), a
     * directed distributed graph; equal signatures of different layouts. */
    MPI_Comm ring, line, dgraph;
    int rdims[1] = {size}, rper[1] = {1}, lper[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, rdims, rper, 0, &ring);
    MPI_Cart_create(MPI_COMM_WORLD, 1, rdims, lper, 0, &line);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int weight[1] = {1}; /* weighted: Open MPI's MPI_UNWEIGHTED trips gcc's bounds checks */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, weight, 1, &right, weight,
                                   MPI_INFO_NULL, 0, &dgraph);
    int nb[4] = {-1, -1, -1, -1}, mine4[4] = {rank, rank, rank, rank};
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, nb, 1, MPI_INT, ring);
    CHECK(nb[0] == left && nb[1] == right);
    MPI_Datatype pair2;
    MPI_Type_contiguous(2, MPI_INT, &pair2);
    MPI_Type_commit(&pair2);
    MPI_Neighbor_alltoall(mine4, 1, pair2, nb, 2, MPI_INT, ring);
    CHECK(nb[0] == left && nb[3] == right);
    int ncounts[2] = {1, 1}, ndispls[2] = {0, 1};
    MPI_Aint wdispls[2] = {0, sizeof(int)};
    MPI_Datatype ntypes[2] = {MPI_INT, MPI_INT};
    for (int i = 0; i < 4; i++) nb[i] = -1;
    MPI_Neighbor_alltoallv(mine4, ncounts, ndispls, MPI_INT, nb, ncounts, ndispls, MPI_INT, line);
    CHECK(nb[0] == (rank > 0 ? left : -1) && nb[1] == (rank < size - 1 ? right : -1));
    MPI_Neighbor_alltoallw(mine4, ncounts, wdispls, ntypes, nb, ncounts, wdispls, ntypes, ring);
    MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, nb, ncounts, ndispls, MPI_INT, ring);
    CHECK(nb[0] == left && nb[1] == right);
    MPI_Ineighbor_alltoall(&rank, 1, MPI_INT, nb, 1, MPI_INT, dgraph, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(nb[0] == left);
    sum += nb[0];
    MPI_Type_free(&pair2);
    MPI_Comm_free(&dgraph);
    MPI_Comm_free(&line);

#if MPI_VERSION >= 4
    /* Persistent collectives (MPI 4), started twice each. */
    int pv = 0, pin = rank + 1, pout = 0;
    MPI_Request preq[2];
    MPI_Bcast_init(&pv, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[0]);
    MPI_Allreduce_init(&pin, &pout, 1, MPI_INT, MPI_SUM, ring, MPI_INFO_NULL, &preq[1]);
    for (int k = 0; k < 2; k++) {
        if (rank == 0) pv = 100 + k;
        MPI_Startall(2, preq);
        MPI_Waitall(2, preq, stats);
        CHECK(pv == 100 + k && pout == size * (size + 1) / 2);
    }
    MPI_Request_free(&preq[0]);
    MPI_Request_free(&preq[1]);
    sum += pv;
    /* Large-count (_c) forms: MPI_Count counts, MPI_Aint displacements. */
    MPI_Count ccount = 4, ccounts[64];
    MPI_Aint cdispls[64];
    for (int i = 0; i < size; i++) ccounts[i] = 1, cdispls[i] = i;
    for (int i = 0; i < 4; i++) a[i] = rank == 0 ? 40 + i : -1;
    MPI_Bcast_c(a, ccount, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(a[3] == 43);
    MPI_Alltoallv_c(a, ccounts, cdispls, MPI_INT, b, ccounts, cdispls, MPI_INT, MPI_COMM_WORLD);
    MPI_Iallreduce_c(&one, &tot, (MPI_Count)1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(tot == size * (size - 1) / 2);
#endif
    MPI_Comm_free(&ring);

    /* A freed type's handle named again by a new type (MPICH reuses it at
     * once): the checker must not remember the old type's signature. */
    for (int round = 0; round < 3; round++) {
        MPI_Datatype t1, t2;
        MPI_Type_contiguous(2, MPI_INT, &t1);
        MPI_Type_commit(&t1);
        if (rank == 0) MPI_Bcast(a, 1, t1, 0, MPI_COMM_WORLD);
        else MPI_Bcast(a, 2, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Type_free(&t1);
        MPI_Type_contiguous(3, MPI_FLOAT, &t2);
        MPI_Type_commit(&t2);
        if (rank == 0) MPI_Bcast(a, 1, t2, 0, MPI_COMM_WORLD);
        else MPI_Bcast(a, 3, MPI_FLOAT, 0, MPI_COMM_WORLD);
        MPI_Type_free(&t2);
    }

    /* Windows, files and the other calls of the paper's Table 2. */
    MPI_Win win;
    int wbuf[4] = {0, 0, 0, 0};
    MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    CHECK(wbuf[0] == (rank + size - 1) % size);
    MPI_Win_free(&win);
    int *abase;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &abase, &win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, "mpix-check-correct.tmp",
                  MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    MPI_File_set_size(fh, 0);
    MPI_File_preallocate(fh, 64 * size);
    MPI_File_set_atomicity(fh, 0);
    /* equal etype signatures of different layouts: MPI_INT and a 1-int struct */
    MPI_Datatype et;
    int one_bl = 1;
    MPI_Aint zero = 0;
    MPI_Datatype int_t = MPI_INT;
    MPI_Type_create_struct(1, &one_bl, &zero, &int_t, &et);
    MPI_Type_commit(&et);
    MPI_File_set_view(fh, 0, rank % 2 ? et : MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_Status fst;
    int fv = 1000 + rank, fr = -1;
    MPI_File_write_at_all_begin(fh, rank, &fv, 1, MPI_INT);
    MPI_File_write_at_all_end(fh, &fv, &fst);
    /* nonatomic mode: sync-barrier-sync makes the writes visible (MPI 4.0 §14.6.1) */
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at_all_begin(fh, (rank + 1) % size, &fr, 1, MPI_INT);
    MPI_File_read_at_all_end(fh, &fr, &fst);
    CHECK(fr == 1000 + (rank + 1) % size);
    MPI_File_close(&fh);
    MPI_Type_free(&et);
    int newrank, mdims[1] = {size}, mper[1] = {0};
    MPI_Cart_map(MPI_COMM_WORLD, 1, mdims, mper, &newrank);
    CHECK(newrank == rank);
    MPI_Comm idup;
    MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_SUM, idup);
    CHECK(tot == size * (size - 1) / 2);
    /* Orders across communicators that are correct: the two halves make
     * different numbers of calls on their own half between calls on the
     * wider ones (world, its duplicates), and a nonblocking call started
     * on one communicator before a blocking one on another on some ranks
     * and after it on others (a start does not wait). */
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k <= (rank % 2 ? 0 : i); k++) MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_SUM, half);
        MPI_Bcast(a, 1, MPI_INT, 0, dup);
        MPI_Barrier(idup);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request ib;
    if (rank % 2) MPI_Ibarrier(dup, &ib);
    MPI_Bcast(a, 1, MPI_INT, 0, idup);
    if (!(rank % 2)) MPI_Ibarrier(dup, &ib);
    MPI_Wait(&ib, MPI_STATUS_IGNORE);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Type_free(&vec);

    long all = 0;
    MPI_Allreduce(&sum, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("correct: checksum %ld, failures %d\n", all, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
