/* Erroneous one-sided and file calls for mpix-check's datatype checks
 * (check/src/rma.rs, check/src/io.rs), one per scenario (argv[1]). Rank 0
 * makes the erroneous RMA call on a window of 16 ints per rank; in the
 * file scenarios the last rank writes a temporary file of its own. The window's
 * error handler aborts; the file's returns, and the program then exits 1.
 * scripts/check-type-tests.sh asserts the reports. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int file_scenario(const char *s, int rank) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/mpix-check-io-%d-%d", (int)getpid(), rank);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    int rc = MPI_SUCCESS;
    short shorts[8] = {0};
    int ints[8] = {0};
    MPI_Datatype t;
    if (!strcmp(s, "io-data")) {
        MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
        rc = MPI_File_write(fh, shorts, 3, MPI_SHORT, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "io-filetype")) {
        MPI_Type_contiguous(3, MPI_INT, &t);
        MPI_Type_commit(&t);
        rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, t, "native", MPI_INFO_NULL);
        MPI_Type_free(&t);
    } else if (!strcmp(s, "io-read-overlap")) {
        MPI_File_write(fh, ints, 8, MPI_INT, MPI_STATUS_IGNORE);
        MPI_Type_vector(2, 2, 1, MPI_INT, &t);
        MPI_Type_commit(&t);
        rc = MPI_File_read_at(fh, 0, ints, 1, t, MPI_STATUS_IGNORE);
        MPI_Type_free(&t);
    }
    MPI_File_close(&fh);
    return rc;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = argc > 1 ? argv[1] : "";
    int last = size - 1;
    if (!strncmp(s, "io-", 3)) {
        int rc = rank == last ? file_scenario(s, rank) : MPI_SUCCESS;
        MPI_Finalize();
        return rc == MPI_SUCCESS ? 0 : 1;
    }
    int base[16] = {0}, local[16] = {0}, result[16] = {0};
    MPI_Win win;
    MPI_Win_create(base, sizeof base, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Win_fence(0, win);
    if (rank == 0) {
        if (!strcmp(s, "put-mismatch")) {
            MPI_Type_contiguous(2, MPI_DOUBLE, &t);
            MPI_Type_commit(&t);
            MPI_Put(local, 2, MPI_INT, last, 0, 1, t, win);
        } else if (!strcmp(s, "get-range")) {
            MPI_Get(local, 4, MPI_INT, last, 14, 4, MPI_INT, win);
        } else if (!strcmp(s, "acc-mixed")) {
            int bl[2] = {1, 1};
            MPI_Aint d[2] = {0, 8};
            MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
            MPI_Type_create_struct(2, bl, d, ty, &t);
            MPI_Type_commit(&t);
            MPI_Accumulate(local, 1, t, last, 0, 1, t, MPI_SUM, win);
        } else if (!strcmp(s, "acc-types")) {
            MPI_Accumulate(local, 2, MPI_INT, last, 0, 2, MPI_FLOAT, MPI_SUM, win);
        } else if (!strcmp(s, "fetch-derived")) {
            MPI_Type_contiguous(1, MPI_INT, &t);
            MPI_Type_commit(&t);
            MPI_Fetch_and_op(local, result, t, last, 0, MPI_SUM, win);
        } else if (!strcmp(s, "get-overlap")) {
            MPI_Type_vector(2, 2, 1, MPI_INT, &t);
            MPI_Type_commit(&t);
            MPI_Get(local, 1, t, last, 0, 4, MPI_INT, win);
        }
    }
    MPI_Win_fence(0, win);
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    MPI_Win_free(&win);
    MPI_Finalize();
    /* Only where the erroneous call was let through. */
    return 1;
}
