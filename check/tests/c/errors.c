/* Erroneous programs for mpix-check, one per scenario (argv[1]). In each,
 * the last rank (or rank 0) deviates; the test script asserts the report
 * and the job's exit status. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}
static void max_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i]) ((int *)inout)[i] = ((int *)in)[i];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = argc > 1 ? argv[1] : "";
    int last = rank == size - 1;
    int buf[64] = {0}, out[64] = {0};
    int rc = MPI_SUCCESS;

    if (!strcmp(s, "barrier_bcast")) { /* paper example 1 */
        if (last) rc = MPI_Barrier(MPI_COMM_WORLD);
        else rc = MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(s, "int_byte")) { /* paper examples 2 and 3 */
        if (last) rc = MPI_Bcast(buf, (int)sizeof(int), MPI_BYTE, 0, MPI_COMM_WORLD);
        else rc = MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(s, "root")) { /* paper examples 4 and 5 */
        rc = MPI_Bcast(buf, 1, MPI_INT, last ? rank : 0, MPI_COMM_WORLD);
    } else if (!strcmp(s, "split_root")) {
        /* On the odd ranks' half (comm rank k is world rank 2k + 1), the
         * half's last rank passes itself as root; the even half is correct. */
        MPI_Comm half;
        int hrank, hsize;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Comm_rank(half, &hrank);
        MPI_Comm_size(half, &hsize);
        int odd_last = rank % 2 == 1 && hrank == hsize - 1;
        rc = MPI_Bcast(buf, 1, MPI_INT, odd_last ? hrank : 0, half);
        MPI_Comm_free(&half);
    } else if (!strcmp(s, "op")) {
        rc = MPI_Allreduce(buf, out, 4, MPI_INT, last ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(s, "user_op")) {
        MPI_Op op;
        MPI_Op_create(last ? max_fn : sum_fn, 1, &op);
        rc = MPI_Reduce(buf, out, 4, MPI_INT, op, 0, MPI_COMM_WORLD);
        MPI_Op_free(&op);
    } else if (!strcmp(s, "late")) {
        /* Call #3 differs (the op: MPI computes on and nothing hangs), then
         * 1000 correct calls: the report must still name call #3 and its
         * line, at once (immediate) or when the batch holding it is
         * verified (batched, whose call sites are learned from the first
         * two calls of a path and read from the stack after). */
        for (int i = 0; i < 2; i++) rc = MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        rc = MPI_Allreduce(buf, out, 4, MPI_INT, last ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < 1000 && rc == MPI_SUCCESS; i++)
            rc = MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(s, "recycled_type")) {
        /* A loop that builds, uses and frees a type: the MPI may give each
         * new type the freed one's handle. At call #17 (the first after a
         * batch of 16 is verified, when the types the batch kept are
         * freed) the last rank's type holds floats (the same size: MPI
         * sees nothing): the checker must not take it for call #16. */
        for (int i = 1; i <= 30 && rc == MPI_SUCCESS; i++) {
            MPI_Datatype t;
            MPI_Type_contiguous(2, last && i == 17 ? MPI_FLOAT : MPI_INT, &t);
            MPI_Type_commit(&t);
            rc = MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD);
            MPI_Type_free(&t);
        }
    } else if (!strcmp(s, "recycled_op")) {
        /* The same with a user op: at call #11 the last rank's is another
         * function. */
        for (int i = 1; i <= 20 && rc == MPI_SUCCESS; i++) {
            MPI_Op op;
            MPI_Op_create(last && i == 11 ? max_fn : sum_fn, 1, &op);
            rc = MPI_Allreduce(buf, out, 4, MPI_INT, op, MPI_COMM_WORLD);
            MPI_Op_free(&op);
        }
    } else if (!strcmp(s, "recycled_counts")) {
        /* The same with the contents of a counts array: at call #17 the
         * last rank expects 2 ints from rank 0, which sends 1 (MPI
         * receives less than it allows for: no error). */
        int sc[64], sd[64], rcn[64], rd[64];
        for (int i = 0; i < size; i++) sc[i] = rcn[i] = 1, sd[i] = i, rd[i] = 2 * i;
        for (int i = 1; i <= 30 && rc == MPI_SUCCESS; i++) {
            rcn[0] = last && i == 17 ? 2 : 1;
            rc = MPI_Alltoallv(buf, sc, sd, MPI_INT, out, rcn, rd, MPI_INT, MPI_COMM_WORLD);
        }
    } else if (!strcmp(s, "recycled_types")) {
        /* The same with the contents of a datatypes array: at call #17
         * the last rank receives floats from rank 0 (the same size: MPI
         * sees nothing). */
        int sc[64], sd[64], rcn[64], rd[64];
        MPI_Datatype st[64], rt[64];
        for (int i = 0; i < size; i++)
            sc[i] = rcn[i] = 1, sd[i] = rd[i] = 4 * i, st[i] = rt[i] = MPI_INT;
        for (int i = 1; i <= 30 && rc == MPI_SUCCESS; i++) {
            rt[0] = last && i == 17 ? MPI_FLOAT : MPI_INT;
            rc = MPI_Alltoallw(buf, sc, sd, st, out, rcn, rd, rt, MPI_COMM_WORLD);
        }
    } else if (!strcmp(s, "alltoallw")) {
        /* The last rank receives from rank 0 a derived type of floats;
         * after the call the program frees it and changes its arrays (a
         * report made later names what the call was given). */
        int sc[64], sd[64], rcn[64], rd[64];
        MPI_Datatype st[64], rt[64], f;
        MPI_Type_contiguous(1, MPI_FLOAT, &f);
        MPI_Type_commit(&f);
        for (int i = 0; i < size; i++)
            sc[i] = rcn[i] = 1, sd[i] = rd[i] = 4 * i, st[i] = rt[i] = MPI_INT;
        if (last) rt[0] = f;
        rc = MPI_Alltoallw(buf, sc, sd, st, out, rcn, rd, rt, MPI_COMM_WORLD);
        MPI_Type_free(&f);
        for (int i = 0; i < size; i++) st[i] = rt[i] = MPI_CHAR, sc[i] = rcn[i] = 7;
    } else if (!strcmp(s, "barrier_bcast_late")) {
        /* barrier_bcast at call #3, after two correct calls. */
        for (int i = 0; i < 2; i++) rc = MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (last) rc = MPI_Barrier(MPI_COMM_WORLD);
        else rc = MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(s, "in_place")) {
        rc = MPI_Allreduce(rank == 0 ? MPI_IN_PLACE : (void *)buf, out, 4, MPI_INT, MPI_SUM,
                           MPI_COMM_WORLD);
    } else if (!strcmp(s, "struct")) {
        /* struct {int, double} x 2 everywhere, struct {int, float} on the last rank */
        MPI_Datatype t, c;
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_INT, last ? MPI_FLOAT : MPI_DOUBLE};
        MPI_Type_create_struct(2, bl, d, ty, &t);
        MPI_Type_contiguous(2, t, &c);
        MPI_Type_commit(&c);
        rc = MPI_Bcast(buf, 1, c, 0, MPI_COMM_WORLD);
        MPI_Type_free(&c);
        MPI_Type_free(&t);
    } else if (!strcmp(s, "gather_count")) {
        rc = MPI_Gather(buf, last ? 2 : 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(s, "alltoallv")) {
        /* rank 1 expects floats from rank 0, which sends ints */
        int sc[64], sd[64], rcn[64], rd[64];
        for (int i = 0; i < size; i++) sc[i] = rcn[i] = 1, sd[i] = rd[i] = i;
        MPI_Datatype rt = rank == 1 ? MPI_FLOAT : MPI_INT;
        if (rank == 1) { /* rank 1 receives floats from everyone, so all senders to it differ: first is rank 0 */ }
        rc = MPI_Alltoallv(buf, sc, sd, MPI_INT, out, rcn, rd, rt, MPI_COMM_WORLD);
        /* The arrays change after the call: a report made later (batched
         * verification) names the counts the call was given. */
        for (int i = 0; i < size; i++) sc[i] = rcn[i] = 7;
    } else if (!strcmp(s, "alltoallv_count")) {
        /* rank 0 sends 2 ints to the last rank, which expects 1: MPI
         * fails in the call (a truncation) */
        int sc[64], sd[64], rcn[64], rd[64];
        for (int i = 0; i < size; i++) sc[i] = rcn[i] = 1, sd[i] = rd[i] = 2 * i;
        if (rank == 0) sc[size - 1] = 2;
        rc = MPI_Alltoallv(buf, sc, sd, MPI_INT, out, rcn, rd, MPI_INT, MPI_COMM_WORLD);
    } else if (!strcmp(s, "reduce_scatter")) {
        int counts[64];
        for (int i = 0; i < size; i++) counts[i] = 1;
        if (last) counts[0] = 2;
        rc = MPI_Reduce_scatter(buf, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) counts[i] = 7;
    } else if (!strcmp(s, "cart_dims")) {
        int dims[2] = {size, 1}, periods[2] = {0, 0};
        if (last) dims[0] = 1, dims[1] = size;
        MPI_Comm cart;
        rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    } else if (!strcmp(s, "ibcast_root")) {
        MPI_Request r;
        MPI_Ibcast(buf, 1, MPI_INT, last ? rank : 0, MPI_COMM_WORLD, &r);
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "bcast_ibcast")) {
        /* A blocking collective never matches its nonblocking form: the
         * last rank calls MPI_Ibcast, the others MPI_Bcast. */
        if (last) {
            MPI_Request r;
            MPI_Ibcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
    } else if (!strcmp(s, "allreduce_iallreduce")) {
        /* The odd ranks call MPI_Iallreduce (tested in a loop), the even
         * ones MPI_Allreduce. */
        if (rank % 2) {
            MPI_Request r;
            int flag = 0;
            MPI_Iallreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
            while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        }
    } else if (!strcmp(s, "barrier_ibarrier")) {
        /* Rank 0 calls MPI_Ibarrier, the others MPI_Barrier. */
        if (rank == 0) {
            MPI_Request r;
            MPI_Ibarrier(MPI_COMM_WORLD, &r);
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Barrier(MPI_COMM_WORLD);
        }
    } else if (!strcmp(s, "two_comms")) { /* the paper's section 5 example */
        MPI_Comm c1, c2;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c1);
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c2);
        MPI_Comm_set_name(c1, "comm1");
        MPI_Comm_set_name(c2, "comm2");
        if (rank < size / 2) {
            MPI_Bcast(buf, 1, MPI_INT, 0, c1);
            MPI_Bcast(buf, 1, MPI_INT, 0, c2);
        } else {
            MPI_Bcast(buf, 1, MPI_INT, 0, c2);
            MPI_Bcast(buf, 1, MPI_INT, 0, c1);
        }
    } else if (!strcmp(s, "pair_order")) {
        /* A communicator of ranks 0 and 1 and MPI_COMM_WORLD, which holds
         * them: rank 1 uses them in the opposite order. */
        MPI_Comm pair;
        MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : 1, rank, &pair);
        MPI_Comm_set_name(pair, "pair");
        if (rank == 1) {
            MPI_Bcast(buf, 1, MPI_INT, 0, pair);
            MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        } else {
            MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Bcast(buf, 1, MPI_INT, 0, pair);
        }
    } else if (!strcmp(s, "neighbor")) {
        /* A ring's neighborhood alltoall: the last rank receives floats. */
        MPI_Comm ring;
        int dims[1] = {size}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        rc = MPI_Neighbor_alltoall(buf, 1, MPI_INT, out, 1, last ? MPI_FLOAT : MPI_INT, ring);
    } else if (!strcmp(s, "persistent_root")) {
#if MPI_VERSION >= 4
        MPI_Request r;
        MPI_Bcast_init(buf, 1, MPI_INT, last ? rank : 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Start(&r);
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
#else
        /* No persistent collectives in this MPI: the same report from the
         * nonblocking form keeps the scenario's expectations. */
        MPI_Request r;
        MPI_Ibcast(buf, 1, MPI_INT, last ? rank : 0, MPI_COMM_WORLD, &r);
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
#endif
    } else if (!strcmp(s, "win_fence")) {
        MPI_Win win;
        MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        rc = MPI_Win_fence(last ? MPI_MODE_NOPRECEDE : 0, win);
    } else if (!strcmp(s, "file_view")) {
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, "mpix-check-errors.tmp",
                      MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
        rc = MPI_File_set_view(fh, 0, last ? MPI_FLOAT : MPI_INT, last ? MPI_FLOAT : MPI_INT,
                               "native", MPI_INFO_NULL);
    } else if (!strcmp(s, "large_count")) {
        int counts[64], displs[64];
        for (int i = 0; i < size; i++) counts[i] = 1, displs[i] = i;
#if MPI_VERSION >= 4
        MPI_Count cc[64];
        MPI_Aint cd[64];
        for (int i = 0; i < size; i++) cc[i] = 1, cd[i] = i;
        rc = MPI_Alltoallv_c(buf, cc, cd, MPI_INT, out, cc, cd, last ? MPI_FLOAT : MPI_INT, MPI_COMM_WORLD);
        (void)counts;
        (void)displs;
#else
        rc = MPI_Alltoallv(buf, counts, displs, MPI_INT, out, counts, displs, last ? MPI_FLOAT : MPI_INT,
                           MPI_COMM_WORLD);
#endif
    } else if (!strncmp(s, "inter_", 6)) {
        /* An intercommunicator between the even and the odd ranks. */
        MPI_Comm half, inter;
        int even = rank % 2 == 0;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, even ? 1 : 0, 7, &inter);
        if (!strcmp(s, "inter_two_roots")) {
            /* The even group all pass MPI_ROOT, and so does world rank 1. */
            int root = even || rank == 1 ? MPI_ROOT : 0;
            rc = MPI_Bcast(buf, 1, MPI_INT, root, inter);
        } else if (!strcmp(s, "inter_allgather")) {
            /* The odd group receives floats where the even group sends ints. */
            rc = MPI_Allgather(buf, 1, MPI_INT, out, 1, even ? MPI_INT : MPI_FLOAT, inter);
        } else if (!strcmp(s, "inter_high")) {
            /* Within the even group, world rank 2 passes another high. */
            MPI_Comm merged;
            rc = MPI_Intercomm_merge(inter, rank == 2, &merged);
        }
    } else if (!strcmp(s, "bcast_as_send")) {
        if (rank == 0) MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        else MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "errors_return")) {
        /* Under MPI_ERRORS_RETURN the call returns the checker's error on every rank. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Bcast(buf, 1, MPI_INT, last ? rank : 0, MPI_COMM_WORLD);
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        printf("rank %d: MPI_Bcast returned %s: %s\n", rank, rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error", msg);
        rc = MPI_SUCCESS;
    } else if (!strcmp(s, "errors_return_late")) {
        /* Three correct calls under MPI_ERRORS_ARE_FATAL (the batched mode
         * records them), then MPI_ERRORS_RETURN: the fourth call, whose
         * roots differ, returns the error itself. */
        for (int k = 0; k < 3; k++) MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Bcast(buf, 1, MPI_INT, last ? rank : 0, MPI_COMM_WORLD);
        printf("rank %d: call #4 returned %s\n", rank, rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
        rc = MPI_SUCCESS;
    } else if (!strcmp(s, "warn")) {
        /* MPIX_CHECK=warn: reported, then the (same-size) call goes ahead */
        rc = MPI_Reduce(buf, out, 1, last ? MPI_FLOAT : MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("warn: continued after the report\n");
    } else {
        if (rank == 0) fprintf(stderr, "unknown scenario '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rc != MPI_SUCCESS) printf("rank %d: call returned %d\n", rank, rc);
    MPI_Finalize();
    return 0;
}
