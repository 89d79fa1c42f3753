/* A correct program for mpix-check's one-sided and file checks
 * (check/src/rma.rs, check/src/io.rs): RMA with derived types on both
 * sides (put, get, accumulate, get-accumulate, their request forms,
 * fetch-and-op, compare-and-swap, a target buffer that ends exactly at
 * the window's end, MPI_PROC_NULL targets) on windows made by
 * MPI_Win_create and MPI_Win_allocate; file views with a derived etype
 * and a filetype of whole etypes, data accesses of whole etypes in other
 * types, and the default view read with ints. Prints result lines
 * "rma-io-correct: ..." that must be the same with and without the
 * checker, and makes no report. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#define N 16

static long rma(int rank, int size) {
    int *base;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < N; i++) base[i] = rank * 100 + i;
    int next = (rank + 1) % size;
    int local[N], result[N] = {0};
    for (int i = 0; i < N; i++) local[i] = i + 1;
    MPI_Datatype every_other, pairs;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other); /* 4 ints, extent 7 ints */
    MPI_Type_contiguous(2, MPI_INT, &pairs);
    MPI_Type_commit(&every_other);
    MPI_Type_commit(&pairs);
    MPI_Win_fence(0, win);
    /* 4 ints from every other int into two pairs at the window's end. */
    MPI_Put(local, 1, every_other, next, N - 4, 2, pairs, win);
    MPI_Win_fence(0, win);
    MPI_Get(result, 2, pairs, next, 0, 1, every_other, win);
    MPI_Win_fence(0, win);
    MPI_Accumulate(local, 1, every_other, next, 1, 4, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(local, 2, MPI_INT, result + 8, 1, pairs, next, 2, 1, pairs, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(NULL, 0, MPI_INT, result + 10, 2, MPI_INT, next, 0, 1, pairs, MPI_NO_OP, win);
    MPI_Put(local, 3, MPI_INT, MPI_PROC_NULL, 100, 3, MPI_DOUBLE, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
    int one = 1, old = 0, expect = next * 100 + 15, swap = -1, was = 0;
    MPI_Fetch_and_op(&one, &old, MPI_INT, next, 5, MPI_SUM, win);
    MPI_Compare_and_swap(&swap, &expect, &was, MPI_INT, next, 15, win);
    MPI_Request q[2];
    MPI_Rput(local, 1, pairs, next, 6, 2, MPI_INT, win, &q[0]);
    MPI_Rget(result + 12, 2, MPI_INT, next, 8, 1, pairs, win, &q[1]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    MPI_Win_unlock(next, win);
    MPI_Barrier(MPI_COMM_WORLD);
    long sum = 0;
    for (int i = 0; i < N; i++) sum += (long)(base[i] + result[i]) * (i + 1);
    MPI_Type_free(&every_other);
    MPI_Type_free(&pairs);
    MPI_Win_free(&win);
    /* A window of the program's memory, 8 doubles with a byte unit. */
    double mem[8] = {0}, d[2] = {1.5, 2.5};
    MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Put(d, 2, MPI_DOUBLE, next, 6 * sizeof(double), 2, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    return sum + (long)(mem[6] + mem[7]) + old + was;
}

static long file_io(int rank) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/mpix-check-io-ok-%d-%d", (int)getpid(), rank);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    int out[N], in[N] = {0};
    for (int i = 0; i < N; i++) out[i] = rank * 1000 + i;
    /* The default view: ints through MPI_BYTE's. */
    MPI_File_write_at(fh, 0, out, N, MPI_INT, MPI_STATUS_IGNORE);
    /* A derived etype (two ints) and a filetype of every other etype. */
    MPI_Datatype etype, filetype, four;
    MPI_Type_contiguous(2, MPI_INT, &etype);
    MPI_Type_commit(&etype);
    MPI_Type_vector(2, 1, 2, etype, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_commit(&four);
    MPI_File_set_view(fh, 0, etype, filetype, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, 0, in, 4, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_read_at_all(fh, 2, in + 4, 1, four, MPI_STATUS_IGNORE);
    MPI_Request q;
    MPI_File_iread_at(fh, 0, in + 8, 2, etype, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_File_write_at(fh, 4, out, 2, etype, MPI_STATUS_IGNORE);
    MPI_Type_free(&etype);
    MPI_Type_free(&filetype);
    MPI_Type_free(&four);
    MPI_File_close(&fh);
    long sum = 0;
    for (int i = 0; i < N; i++) sum += (long)in[i] * (i + 1);
    return sum;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long total = rma(rank, size) + file_io(rank), all = 0;
    MPI_Reduce(&total, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("rma-io-correct: checksum %ld on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
