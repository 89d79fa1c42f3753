/* Writes data files for `mpix-marshal dump --data` through MPI-IO from
 * every process: for each type, the archive NAME.mxdt (rank 0, by
 * MPIX_Type_marshal), the data NAME.native and NAME.external32 (each rank
 * writes COPIES copies of the type after the copies of the ranks before
 * it: a file view of the type as filetype, MPI_File_write_all of known
 * values), and NAME.values, the values `dump` must print, one a line.
 * Types of one basic type only: MPICH 4.0's MPI_Pack_external_size aborts
 * on a struct of several (see docs: inspector-data.md).
 * Usage: mpiexec -n N data_write DIR */
#include <mpi.h>
#include <mpix_marshal.h>
#include <stdio.h>
#include <stdlib.h>

#define COPIES 3

static void die(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    fprintf(stderr, "%s failed: %s\n", what, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(call)                    \
    do {                               \
        int rc_ = (call);              \
        if (rc_ != MPI_SUCCESS)        \
            die(#call, rc_);           \
    } while (0)

/* The known value of element j of the file. */
static int int_value(long j) { return (int)(j * 7 - 50); }
static double double_value(long j) { return (double)j * 1.5 - 7.25; }

static void archive(const char *dir, const char *name, MPI_Datatype t)
{
    MPI_Aint size = 0, n = 0;
    CHECK(MPIX_Type_marshal_size("external", t, &size));
    char *buf = malloc((size_t)size);
    CHECK(MPIX_Type_marshal("external", t, buf, size, &n));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.mxdt", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f))
        die("writing the archive", MPI_ERR_OTHER);
    free(buf);
}

/* One type: `basic` is MPI_INT or MPI_DOUBLE, `n` its elements per copy. */
static void one(const char *dir, const char *name, MPI_Datatype t, MPI_Datatype basic, int n)
{
    int rank, procs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    CHECK(MPI_Type_commit(&t));
    if (rank == 0) {
        archive(dir, name, t);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.values", dir, name);
        FILE *f = fopen(path, "w");
        for (long j = 0; j < (long)procs * COPIES * n; j++) {
            if (basic == MPI_INT)
                fprintf(f, "%d\n", int_value(j));
            else
                fprintf(f, "%.2f\n", double_value(j));
        }
        fclose(f);
    }
    /* This rank's values, packed: its copies' elements in typemap order. */
    long first = (long)rank * COPIES * n;
    int *ints = malloc(sizeof(int) * COPIES * n);
    double *doubles = malloc(sizeof(double) * COPIES * n);
    for (long i = 0; i < COPIES * n; i++) {
        ints[i] = int_value(first + i);
        doubles[i] = double_value(first + i);
    }
    void *mem = basic == MPI_INT ? (void *)ints : (void *)doubles;
    const char *reps[2] = {"native", "external32"};
    for (int r = 0; r < 2; r++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%s", dir, name, reps[r]);
        MPI_File fh;
        if (rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        CHECK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
        CHECK(MPI_File_set_view(fh, 0, basic, t, reps[r], MPI_INFO_NULL));
        MPI_Aint extent = 0;
        CHECK(MPI_File_get_type_extent(fh, t, &extent));
        CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * COPIES * extent, basic, t, reps[r], MPI_INFO_NULL));
        CHECK(MPI_File_write_all(fh, mem, COPIES * n, basic, MPI_STATUS_IGNORE));
        CHECK(MPI_File_close(&fh));
    }
    free(ints);
    free(doubles);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: data_write DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Datatype v, s, x;
    /* Blocks of 2 ints every 3 ints. */
    MPI_Type_vector(4, 2, 3, MPI_INT, &v);
    one(argv[1], "vector", v, MPI_INT, 8);
    /* A 2x3 block of a 4x6 array of doubles, from row 1, column 2. */
    int sizes[2] = {4, 6}, sub[2] = {2, 3}, starts[2] = {1, 2};
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &s);
    one(argv[1], "subarray", s, MPI_DOUBLE, 6);
    /* Blocks of 1, 3 and 2 doubles at 0, 4 and 9 doubles. */
    int bl[3] = {1, 3, 2}, d[3] = {0, 4, 9};
    MPI_Type_indexed(3, bl, d, MPI_DOUBLE, &x);
    one(argv[1], "indexed", x, MPI_DOUBLE, 6);
    MPI_Finalize();
    return 0;
}
