/* The C side of the Fortran bindings' cross test (scripts/fortran-tests.sh):
 * the record of fortran/tests/records_f08.f90 as a C struct, its type built
 * from the same Fortran basic types (MPI_DOUBLE_PRECISION, MPI_INTEGER),
 * named "record".
 *   records_c write FILE   archives it (Fortran reads it)
 *   records_c read FILE    reads an archive Fortran wrote and compares it
 *                          with its own at MPIX_COMPARE_NAMES */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "mpix_marshal.h"

struct record {
    double values[3];
    MPI_Fint id;
    MPI_Fint flags[4];
    MPI_Fint pad;
};

static MPI_Datatype record_type(void)
{
    int len[3] = {3, 1, 4};
    MPI_Aint disp[3] = {offsetof(struct record, values), offsetof(struct record, id),
                        offsetof(struct record, flags)};
    MPI_Datatype types[3] = {MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_INTEGER}, s, t;
    MPI_Type_create_struct(3, len, disp, types, &s);
    MPI_Type_create_resized(s, 0, sizeof(struct record), &t);
    MPI_Type_free(&s);
    MPI_Type_set_name(t, "record");
    MPI_Type_commit(&t);
    return t;
}

#define FAIL(...) (fprintf(stderr, "records_c: FAILED: " __VA_ARGS__), fputc('\n', stderr), exit(1))

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 3)
        FAIL("usage: records_c write|read FILE");
    MPI_Datatype t = record_type();
    if (strcmp(argv[1], "write") == 0) {
        MPI_Aint size, n;
        if (MPIX_Type_marshal_size("external", t, &size) != MPI_SUCCESS)
            FAIL("marshal_size");
        char *buf = malloc((size_t)size);
        if (!buf || MPIX_Type_marshal("external", t, buf, size, &n) != MPI_SUCCESS)
            FAIL("marshal");
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0)
            FAIL("writing %s", argv[2]);
        free(buf);
        printf("records_c: wrote %ld bytes to %s\n", (long)n, argv[2]);
    } else {
        static char buf[1 << 16];
        FILE *f = fopen(argv[2], "rb");
        if (!f)
            FAIL("opening %s", argv[2]);
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        MPI_Datatype back;
        if (MPIX_Type_unmarshal("external", buf, (MPI_Aint)n, &back) != MPI_SUCCESS)
            FAIL("unmarshal of %s", argv[2]);
        int res;
        char why[256];
        if (MPIX_Type_compare(t, back, MPIX_COMPARE_NAMES, &res, why, sizeof why) != MPI_SUCCESS ||
            res != 0)
            FAIL("the Fortran archive differs at level %d: %s", res, why);
        MPI_Type_free(&back);
        printf("records_c: read %zu bytes from %s: the same type\n", n, argv[2]);
    }
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
