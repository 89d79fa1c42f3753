/* One archive, two languages: `interop write FILE` marshals the test's
 * record type (python/tests/interop.py builds the same one) to FILE;
 * `interop read FILE` unmarshals FILE and checks it has the typemap and
 * the name of the type built here, packs the same bytes, and marshals
 * back to the bytes read.
 * Run by scripts/python-tests.sh, against an archive Python wrote and
 * for Python to read. */
#include <mpix_marshal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != MPI_SUCCESS) {                                            \
            char msg_[MPI_MAX_ERROR_STRING];                                 \
            int len_ = 0;                                                    \
            MPI_Error_string(rc_, msg_, &len_);                              \
            fprintf(stderr, "interop: %s failed: %s\n", #call, msg_);        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                    \
        }                                                                    \
    } while (0)

/* The record of the Python tests' hdf5ish(). */
static MPI_Datatype record(void) {
    MPI_Datatype vec, name, hv, fl, s, t;
    CHECK(MPI_Type_contiguous(3, MPI_DOUBLE, &vec));
    CHECK(MPI_Type_contiguous(16, MPI_CHAR, &name));
    CHECK(MPI_Type_set_name(name, "name_t"));
    CHECK(MPI_Type_create_hvector(2, 1, 8, MPI_FLOAT, &hv));
    CHECK(MPI_Type_create_resized(hv, 0, 16, &fl));
    int len[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {0, 8, 32, 48};
    MPI_Datatype types[4] = {MPI_INT, vec, name, fl};
    CHECK(MPI_Type_create_struct(4, len, disp, types, &s));
    CHECK(MPI_Type_create_resized(s, 0, 64, &t));
    CHECK(MPI_Type_set_name(t, "record_t"));
    MPI_Type_free(&vec);
    MPI_Type_free(&name);
    MPI_Type_free(&hv);
    MPI_Type_free(&fl);
    MPI_Type_free(&s);
    return t;
}

static int pack(MPI_Datatype t, unsigned char *out, int room) {
    unsigned char src[64];
    for (int i = 0; i < 64; i++) src[i] = (unsigned char)((i * 7 + 3) % 251);
    int pos = 0;
    CHECK(MPI_Pack(src, 1, t, out, room, &pos, MPI_COMM_WORLD));
    return pos;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 3 || (strcmp(argv[1], "read") && strcmp(argv[1], "write"))) {
        fprintf(stderr, "usage: interop read|write FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Datatype t = record();
    if (!strcmp(argv[1], "write")) {
        MPI_Aint size, n;
        CHECK(MPIX_Type_marshal_size("external", t, &size));
        unsigned char *buf = malloc((size_t)size);
        CHECK(MPIX_Type_marshal("external", t, buf, size, &n));
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f)) {
            perror(argv[2]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("interop: C wrote %ld bytes to %s\n", (long)n, argv[2]);
        free(buf);
    } else {
        static unsigned char buf[1 << 16];
        FILE *f = fopen(argv[2], "rb");
        if (!f) {
            perror(argv[2]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        MPI_Datatype u;
        CHECK(MPIX_Type_unmarshal("external", buf, (MPI_Aint)n, &u));
        CHECK(MPI_Type_commit(&u));
        CHECK(MPI_Type_commit(&t));
        /* mpi4py builds with the large-count constructors where the MPI
         * has them (MPI 4), C here with the classic ones: the two types
         * are equal up to the typemap, and the stream rebuilt here
         * marshals back to the very bytes read (the tree, names and
         * constructors the writer described). */
        int result;
        char why[512];
        CHECK(MPIX_Type_compare(t, u, MPIX_COMPARE_TYPEMAP, &result, why, sizeof why));
        if (result != 0) {
            fprintf(stderr, "interop: the archive's typemap differs from C's type: %s\n", why);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        CHECK(MPI_Type_get_name(u, name, &len));
        if (strcmp(name, "record_t")) {
            fprintf(stderr, "interop: the archive's type is named \"%s\"\n", name);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        unsigned char p1[256], p2[256];
        int n1 = pack(t, p1, sizeof p1), n2 = pack(u, p2, sizeof p2);
        if (n1 != n2 || memcmp(p1, p2, (size_t)n1)) {
            fprintf(stderr, "interop: the archive's type packs other bytes\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        static unsigned char again[1 << 16];
        MPI_Aint m;
        CHECK(MPIX_Type_marshal("external", u, again, sizeof again, &m));
        if ((size_t)m != n || memcmp(again, buf, n)) {
            fprintf(stderr, "interop: the rebuilt type marshals to other bytes\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("interop: C read %zu bytes from %s: same typemap, name and packed bytes as C's type, marshals back to the same bytes\n", n, argv[2]);
        MPI_Type_free(&u);
    }
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
