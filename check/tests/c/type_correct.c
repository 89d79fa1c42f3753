/* A correct program for mpix-check's datatype checks: receives into types
 * whose entries never overlap, however they are built (holes that later
 * copies fill, structs out of order, subarrays, resized
 * types with an exact extent), and sends from a type whose entries do
 * overlap (allowed: only receiving into one is erroneous). Prints result
 * lines "type-correct: ..." that must be the same with and without the
 * checker, and makes no report. */
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
    }
    long all = 0;
    MPI_Reduce(&total, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("type-correct: checksum %ld on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
