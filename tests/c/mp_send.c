/* Rank 0 marshals datatypes and broadcasts the bytes; every other rank
 * rebuilds them, checks size, extents and names against rank 0's, and
 * receives real data from rank 0 with the rebuilt type, and again with the
 * original type built locally: the two must land the same bytes. (Not
 * compared with a local MPI_Pack/MPI_Unpack: Open MPI 5 moves the padding
 * bytes of a long double differently in the two, for the original type
 * too.) */
#include "check.h"
#include "types.h"
#include <mpix_marshal.h>
#include <string.h>

#define NTYPES 5

static unsigned char pattern(MPI_Aint i) { return (unsigned char)(i * 31 + 7); }

static MPI_Datatype make(int k)
{
    return k == 0 ? paper_indexed() : k == 1 ? hdf5_complex() : k == 2 ? named_struct() : k == 3 ? subarray_type() : shared_member_struct();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    for (int k = 0; k < NTYPES; k++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        MPI_Aint n = 0;
        unsigned char *bytes = NULL;
        MPI_Count geo[5] = {0};
        char name[MPI_MAX_OBJECT_NAME] = "";
        if (rank == 0) {
            t = make(k);
            MPI_OK(MPIX_Type_marshal_size("external", t, &n));
            bytes = malloc((size_t)n);
            MPI_OK(MPIX_Type_marshal("external", t, bytes, n, &n));
            MPI_Type_size_x(t, &geo[0]);
            MPI_Type_get_extent_x(t, &geo[1], &geo[2]);
            MPI_Type_get_true_extent_x(t, &geo[3], &geo[4]);
            int len;
            MPI_Type_get_name(t, name, &len);
        }
        MPI_Bcast(&n, 1, MPI_AINT, 0, MPI_COMM_WORLD);
        MPI_Bcast(geo, 5, MPI_COUNT, 0, MPI_COMM_WORLD);
        MPI_Bcast(name, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (rank != 0)
            bytes = malloc((size_t)n);
        MPI_Bcast(bytes, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank != 0) {
            MPI_OK(MPIX_Type_unmarshal("external", bytes, n, &t));
            MPI_Count g[5];
            MPI_Type_size_x(t, &g[0]);
            MPI_Type_get_extent_x(t, &g[1], &g[2]);
            MPI_Type_get_true_extent_x(t, &g[3], &g[4]);
            CHECK(memcmp(g, geo, sizeof g) == 0, "type %d: geometry differs on rank %d", k, rank);
            char mine[MPI_MAX_OBJECT_NAME];
            int len;
            MPI_Type_get_name(t, mine, &len);
            CHECK(strcmp(mine, name) == 0, "type %d: name '%s' vs '%s'", k, mine, name);
        }
        MPI_Type_commit(&t);
        /* Data: rank 0 sends from a patterned buffer twice, the others
         * receive into zeroed buffers with the rebuilt type, then with the
         * original one built here. */
        MPI_Aint span = geo[3] + geo[4];
        unsigned char *src = malloc((size_t)span), *dst = calloc((size_t)span, 1), *want = calloc((size_t)span, 1);
        for (MPI_Aint i = 0; i < span; i++)
            src[i] = pattern(i);
        if (rank == 0) {
            for (int r = 1; r < size; r++) {
                MPI_OK(MPI_Send(src, 1, t, r, k, MPI_COMM_WORLD));
                MPI_OK(MPI_Send(src, 1, t, r, k, MPI_COMM_WORLD));
            }
        } else {
            MPI_OK(MPI_Recv(dst, 1, t, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_Datatype original = make(k);
            MPI_Type_commit(&original);
            MPI_OK(MPI_Recv(want, 1, original, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_Type_free(&original);
            CHECK(memcmp(dst, want, (size_t)span) == 0, "type %d: received data differs on rank %d", k, rank);
            int nonzero = 0;
            for (MPI_Aint i = 0; i < span; i++)
                nonzero += dst[i] != 0;
            CHECK(nonzero > 0, "type %d: nothing received", k);
        }
        MPI_Type_free(&t);
        free(src);
        free(dst);
        free(want);
        free(bytes);
    }
    int rc = check_report("mp_send", rank);
    MPI_Finalize();
    return rc;
}
