/* A program built against one MPI and linked to the mpix-marshal built for
 * the other (scripts/wrong-mpi-tests.sh): the library's first call must
 * refuse with an error of the MPIX_MARSHAL_ERR_UNSUPPORTED kind whose
 * string names both MPIs, not crash. Prints that string, and exits 0 only
 * when the call was refused so. Compiled against the source tree's header,
 * which has no compile-time check (the installed one has). */
#include <mpix_marshal.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Aint size = -1;
    int rc = MPIX_Type_marshal_size("external", MPI_INT, &size);
    int kind = -1;
    MPIX_Type_marshal_error_kind(rc, &kind);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    text[0] = '\0';
    MPI_Error_string(rc, text, &len);
    printf("wrong_mpi: rc %s, kind %d, size %ld: %s\n", rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error",
           kind, (long)size, text);
    int refused = rc != MPI_SUCCESS && kind == MPIX_MARSHAL_ERR_UNSUPPORTED && size == -1;
    MPI_Finalize();
    return refused ? 0 : 1;
}
