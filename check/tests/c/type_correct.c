/* A correct program for mpix-check's datatype checks: receives into types
 * whose entries never overlap, however they are built (holes that later
 * copies fill, structs out of order, subarrays, resized
 * types with an exact extent), and sends from a type whose entries do
 * overlap (allowed: only receiving into one is erroneous); builds a type
 * with every constructor and frees every type in each legal order (old
 * types before the new one is used, a type while a nonblocking call on it
 * is pending, the types MPI_Type_get_contents returns, a duplicate before
 * its original); gives MPI_DATATYPE_NULL and an uncommitted type only
 * where MPI does not read them (a gather's receive type off the root).
 * Prints result lines "type-correct: ..." that must be the same with and
 * without the checker, and makes no report (no type is left unfreed). */
#include <mpi.h>
#include <stdio.h>

#define N 64

static long sum(const int *a, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += (long)a[i] * (i + 1);
    return s;
}

/* Rank 0 sends `n` ints, rank 1 receives them as (count, t). */
static long exchange(int rank, int count, MPI_Datatype t, int n, int tag) {
    int out[N], in[N] = {0};
    for (int i = 0; i < N; i++) out[i] = 100 + i;
    MPI_Type_commit(&t);
    if (rank == 0) MPI_Send(out, n, MPI_INT, 1, tag, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(in, count, t, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    return sum(in, N);
}

/* Every constructor once, each old type freed as soon as the new type is
 * built; the result sent from rank 0 to rank 1. */
static long every_constructor(int rank) {
    MPI_Datatype t[13], s;
    int bl[2] = {1, 2}, disp[2] = {4, 0};
    MPI_Aint bdisp[2] = {16, 0};
    MPI_Type_contiguous(2, MPI_INT, &t[0]);
    MPI_Type_vector(2, 1, 2, t[0], &t[1]);
    MPI_Type_create_hvector(2, 1, 32, t[1], &t[2]);
    MPI_Type_indexed(2, bl, disp, MPI_INT, &t[3]);
    MPI_Type_create_hindexed(2, bl, bdisp, t[3], &t[4]);
    MPI_Type_create_indexed_block(2, 1, disp, MPI_SHORT, &t[5]);
    MPI_Type_create_hindexed_block(2, 2, bdisp, t[5], &t[6]);
    MPI_Datatype members[2] = {t[2], t[6]};
    MPI_Aint mdisp[2] = {0, 256};
    MPI_Type_create_struct(2, bl, mdisp, members, &t[7]);
    int sizes[2] = {4, 4}, sub[2] = {2, 2}, start[2] = {1, 2};
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t[8]);
    int gsizes[1] = {8}, distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG},
        psizes[1] = {2};
    MPI_Type_create_darray(2, 1, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_FLOAT, &t[9]);
    MPI_Type_create_resized(t[8], -8, 200, &t[10]);
    MPI_Type_dup(t[7], &t[11]);
    MPI_Datatype parts[3] = {t[11], t[10], t[9]};
    int pbl[3] = {1, 1, 1};
    MPI_Aint pdisp[3] = {0, 1024, 2048};
    MPI_Type_create_struct(3, pbl, pdisp, parts, &t[12]);
    for (int i = 0; i < 12; i++) MPI_Type_free(&t[i]);
    /* What MPI_Type_get_contents returns is the program's to free. */
    int ni, na, nd, comb, ints[8];
    MPI_Aint addrs[8];
    MPI_Datatype got[3];
    MPI_Type_get_envelope(t[12], &ni, &na, &nd, &comb);
    MPI_Type_get_contents(t[12], 8, 8, 3, ints, addrs, got);
    for (int i = 0; i < nd; i++) MPI_Type_free(&got[i]);
    /* A duplicate of a committed type is committed; freed before its
     * original, which stays usable. */
    MPI_Type_commit(&t[12]);
    MPI_Type_dup(t[12], &s);
    int size;
    MPI_Type_size(s, &size);
    MPI_Type_free(&s);
    static char out[4096], in[4096];
    for (int i = 0; i < 4096; i++) out[i] = (char)(i * 7);
    if (rank == 0) MPI_Send(out, 1, t[12], 1, 7, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(in, 1, t[12], 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&t[12]);
    long sum = size;
    for (int i = 0; i < 4096 && rank == 1; i++) sum += in[i] * (i + 1);
    return sum;
}

/* A type freed while the nonblocking calls on it are pending: legal, the
 * calls complete with it. */
static long free_while_pending(int rank) {
    MPI_Datatype t;
    int out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[8] = {0};
    MPI_Type_vector(2, 2, 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Request q = MPI_REQUEST_NULL;
    if (rank == 0) MPI_Isend(out, 1, t, 1, 8, MPI_COMM_WORLD, &q);
    if (rank == 1) MPI_Irecv(in, 1, t, 0, 8, MPI_COMM_WORLD, &q);
    MPI_Type_free(&t);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    return sum(in, 8);
}

/* Arguments MPI does not read: a gather's receive type off its root
 * (MPI_DATATYPE_NULL, or a type never committed), a broadcast's type and
 * F90 and size-matched types. */
static long unread_arguments(int rank, int size) {
    MPI_Datatype never, f90, matched;
    MPI_Type_contiguous(3, MPI_INT, &never);
    int one = rank + 1, all[64] = {0};
    MPI_Gather(&one, 1, MPI_INT, all, 1, rank == 0 ? MPI_INT : MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    MPI_Gather(&one, 1, MPI_INT, all + 16, 1, rank == 0 ? MPI_INT : never, 0, MPI_COMM_WORLD);
    MPI_Type_free(&never);
    MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f90);
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &matched);
    float x = 1.5f;
    int y = 7;
    MPI_Bcast(&x, 1, f90, 0, MPI_COMM_WORLD);
    MPI_Bcast(&y, 1, matched, 0, MPI_COMM_WORLD);
    return sum(all, 32) * (rank == 0) + (long)(x * 2) + y + size;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long total = 0;
    if (rank < 2) {
        MPI_Datatype a, b, c;
        /* Every other int, extent one int: two copies fill each other's holes. */
        MPI_Type_vector(2, 1, 2, MPI_INT, &a);
        MPI_Type_create_resized(a, 0, (MPI_Aint)sizeof(int), &b);
        MPI_Type_free(&a);
        total += exchange(rank, 2, b, 4, 1);
        /* A struct whose members are out of address order. */
        int bl[3] = {2, 1, 3};
        MPI_Aint d[3] = {5 * sizeof(int), 0, sizeof(int) * 7};
        MPI_Datatype ty[3] = {MPI_INT, MPI_INT, MPI_INT};
        MPI_Type_create_struct(3, bl, d, ty, &a);
        total += exchange(rank, 2, a, 12, 3);
        /* A subarray of a 4x4 array, and an indexed type in any order. */
        int sizes[2] = {4, 4}, sub[2] = {2, 3}, start[2] = {1, 1};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &a);
        total += exchange(rank, 1, a, 6, 4);
        int ibl[3] = {1, 2, 1}, idx[3] = {9, 0, 4};
        MPI_Type_indexed(3, ibl, idx, MPI_INT, &a);
        total += exchange(rank, 3, a, 12, 5);
        /* Sending from an overlapping type: allowed. */
        MPI_Type_vector(2, 2, 1, MPI_INT, &c);
        MPI_Type_commit(&c);
        int out[N], in[N] = {0};
        for (int i = 0; i < N; i++) out[i] = i;
        if (rank == 0) MPI_Send(out, 1, c, 1, 6, MPI_COMM_WORLD);
        if (rank == 1) MPI_Recv(in, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Type_free(&c);
        total += sum(in, N);
        total += every_constructor(rank);
        total += free_while_pending(rank);
    }
    total += unread_arguments(rank, size);
    long all = 0;
    MPI_Reduce(&total, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("type-correct: checksum %ld on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
