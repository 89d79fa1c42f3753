/* Marshalled attributes across processes. Rank 0 builds types carrying two
 * registered keyvals: "segments", a cached flattened description of the
 * type (the (offset, length) runs MPI_Pack visits, like the dataloop cache
 * of the paper), on the outer level, and "tag", an application int, on an
 * inner level. It marshals them and broadcasts the bytes; the other ranks
 * rebuild them and check that the cached description arrived and equals
 * the one they compute from the rebuilt type, and that the inner tag
 * arrived (visible on MPICH; on Open MPI get_contents returns duplicates
 * without attributes, so there the unmarshal callback count is checked).
 * Failing callbacks are refused with the attribute error class, and no
 * datatype handle leaks on any path. */
#include "check.h"
#include "leakcount.h"
#include "types.h"
#include <mpix_marshal.h>
#include <string.h>

/* ---- the cached description: runs of (offset, length) in pack order ---- */
typedef struct {
    MPI_Aint n;
    MPI_Aint run[][2];
} segments;

static segments *describe(MPI_Datatype t)
{
    MPI_Aint lb, extent, tlb, textent;
    int size;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &tlb, &textent);
    MPI_Type_size(t, &size);
    MPI_Datatype c;
    PMPI_Type_dup(t, &c);
    MPI_Type_commit(&c);
    /* Unpack byte j of the packed stream, for each of its three index
     * bytes, to where the type places it; a fourth unpack marks coverage. */
    unsigned char *packed = malloc((size_t)size + 1), *at[4];
    for (int k = 0; k < 4; k++) {
        at[k] = calloc((size_t)textent + 1, 1);
        for (int j = 0; j < size; j++)
            packed[j] = k == 3 ? 1 : (unsigned char)(j >> (8 * k));
        int pos = 0;
        MPI_Unpack(packed, size, &pos, at[k] - tlb, 1, c, MPI_COMM_SELF);
    }
    /* MPICH 4.0 unpacks a long double in a non-contiguous type as an x87
     * value: 10 of its 16 bytes, converted, not copied. A packed byte with
     * no place found is described as -1 and a converted byte that names
     * no packed byte is skipped: the description stays deterministic, the
     * same on every rank of one MPI, and never indexes out of bounds. */
    MPI_Aint *where = malloc(sizeof(MPI_Aint) * ((size_t)size + 1));
    for (int j = 0; j < size; j++)
        where[j] = -1;
    for (MPI_Aint p = 0; p < textent; p++) {
        int j = at[0][p] | at[1][p] << 8 | at[2][p] << 16;
        if (at[3][p] && j < size)
            where[j] = tlb + p;
    }
    segments *s = calloc(1, sizeof *s + sizeof(MPI_Aint[2]) * ((size_t)size + 1));
    for (int j = 0; j < size; j++) {
        if (s->n > 0 && s->run[s->n - 1][0] + s->run[s->n - 1][1] == where[j]) {
            s->run[s->n - 1][1]++;
        } else {
            s->run[s->n][0] = where[j];
            s->run[s->n][1] = 1;
            s->n++;
        }
    }
    for (int k = 0; k < 4; k++)
        free(at[k]);
    free(packed);
    free(where);
    PMPI_Type_free(&c);
    return s;
}

static size_t segments_bytes(const segments *s) { return sizeof *s + sizeof(MPI_Aint[2]) * (size_t)s->n; }

/* ---- keyval callbacks: values are malloc'd blobs whose first word is their length ---- */
typedef struct {
    size_t len;
    unsigned char bytes[];
} blob;

static blob *blob_new(const void *p, size_t len)
{
    blob *b = malloc(sizeof *b + len);
    b->len = len;
    memcpy(b->bytes, p, len);
    return b;
}

static int copy_fn(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)k, (void)extra;
    blob *b = in;
    *(blob **)out = blob_new(b->bytes, b->len);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int k, void *value, void *extra)
{
    (void)t, (void)k, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static blob *get(MPI_Datatype t, int k)
{
    blob *b;
    int flag;
    MPI_Type_get_attr(t, k, &b, &flag);
    return flag ? b : NULL;
}

static int size_fn(int k, const char *name, const char *rep, MPI_Datatype t, MPI_Aint *size)
{
    (void)name, (void)rep;
    blob *b = get(t, k);
    *size = b ? (MPI_Aint)b->len : 0;
    return MPI_SUCCESS;
}

static int marshal_fn(int k, const char *name, const char *rep, MPI_Datatype t, void *out, MPI_Aint outsize,
                      MPI_Aint *written)
{
    (void)name, (void)rep;
    blob *b = get(t, k);
    if (!b || (MPI_Aint)b->len > outsize)
        return MPI_ERR_ARG;
    memcpy(out, b->bytes, b->len);
    *written = (MPI_Aint)b->len;
    return MPI_SUCCESS;
}

static int unmarshals = 0;

static int unmarshal_fn(int k, const char *name, const char *rep, MPI_Datatype t, const void *in, MPI_Aint insize)
{
    (void)name, (void)rep;
    unmarshals++;
    return MPI_Type_set_attr(t, k, blob_new(in, (size_t)insize));
}

static int failing_unmarshal(int k, const char *name, const char *rep, MPI_Datatype t, const void *in,
                             MPI_Aint insize)
{
    (void)k, (void)name, (void)rep, (void)t, (void)in, (void)insize;
    return MPI_ERR_OTHER;
}

static int overclaiming_marshal(int k, const char *name, const char *rep, MPI_Datatype t, void *out,
                                MPI_Aint outsize, MPI_Aint *written)
{
    (void)k, (void)name, (void)rep, (void)t, (void)out;
    *written = outsize + 8;
    return MPI_SUCCESS;
}

static int error_kind(int rc)
{
    int kind = -1;
    MPIX_Type_marshal_error_kind(rc, &kind);
    return kind;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int nested_visible = 1;
#ifdef OPEN_MPI
    nested_visible = 0;
#endif

    int kseg, ktag;
    MPI_Type_create_keyval(copy_fn, delete_fn, &kseg, NULL);
    MPI_Type_create_keyval(copy_fn, delete_fn, &ktag, NULL);
    MPI_OK(MPIX_Type_register_marshaled_keyval(kseg, "org.mpix-marshal.test.segments", size_fn, marshal_fn,
                                               unmarshal_fn));
    MPI_OK(MPIX_Type_register_marshaled_keyval(ktag, "org.mpix-marshal.test.tag", size_fn, marshal_fn,
                                               unmarshal_fn));

    long before = live_types;
    for (int k = 0; k < 5; k++) {
        MPI_Datatype t = MPI_DATATYPE_NULL, inner = MPI_DATATYPE_NULL;
        MPI_Aint n = 0;
        unsigned char *bytes = NULL;
        int tag = 1000 + k;
        if (rank == 0) {
            inner = k == 0 ? paper_indexed() : k == 1 ? named_struct() : k == 2 ? subarray_type() : k == 3 ? hdf5_complex() : shared_member_struct();
            MPI_Type_set_attr(inner, ktag, blob_new(&tag, sizeof tag));
            MPI_Type_contiguous(2, inner, &t);
            segments *s = describe(t);
            MPI_Type_set_attr(t, kseg, blob_new(s, segments_bytes(s)));
            free(s);
            MPI_OK(MPIX_Type_marshal_size("external", t, &n));
            bytes = malloc((size_t)n);
            MPI_OK(MPIX_Type_marshal("external", t, bytes, n, &n));
        }
        MPI_Bcast(&n, 1, MPI_AINT, 0, MPI_COMM_WORLD);
        if (rank != 0)
            bytes = malloc((size_t)n);
        MPI_Bcast(bytes, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank != 0) {
            int calls = unmarshals;
            MPI_OK(MPIX_Type_unmarshal("external", bytes, n, &t));
            CHECK(unmarshals - calls == (nested_visible ? 2 : 1), "type %d: %d unmarshal callbacks ran", k,
                  unmarshals - calls);
            blob *got = get(t, kseg);
            CHECK(got != NULL, "type %d: the cached description did not arrive", k);
            if (got) {
                segments *mine = describe(t);
                CHECK(got->len == segments_bytes(mine) && memcmp(got->bytes, mine, got->len) == 0,
                      "type %d: the cached description differs from the rebuilt type's", k);
                free(mine);
            }
            CHECK(get(t, ktag) == NULL, "type %d: the inner tag leaked to the outer level", k);
            /* The inner level: the type the contiguous was built from. */
            int ni, na, nd, comb;
            MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
            int ints[1];
            MPI_Aint addrs[1];
            MPI_Datatype old;
            MPI_Type_get_contents(t, 1, 0, 1, ints, addrs, &old);
            blob *tb = get(old, ktag);
            if (nested_visible) {
                CHECK(tb && tb->len == sizeof tag && memcmp(tb->bytes, &tag, sizeof tag) == 0,
                      "type %d: the inner tag did not arrive", k);
            }
            MPI_Type_free(&old);
        }
        /* Bad callbacks: refused with the attribute class, nothing leaks. */
        if (rank == 0) {
            MPI_OK(MPIX_Type_register_marshaled_keyval(kseg, "org.mpix-marshal.test.segments", size_fn,
                                                       overclaiming_marshal, unmarshal_fn));
            MPI_Aint w = -1;
            int rc = MPIX_Type_marshal("external", t, bytes, n, &w);
            CHECK(error_kind(rc) == MPIX_MARSHAL_ERR_ATTRIBUTE, "type %d: overclaiming marshal gave %d", k, rc);
            MPI_OK(MPIX_Type_register_marshaled_keyval(kseg, "org.mpix-marshal.test.segments", size_fn, marshal_fn,
                                                       unmarshal_fn));
        } else {
            MPI_OK(MPIX_Type_register_marshaled_keyval(kseg, "org.mpix-marshal.test.segments", NULL, NULL,
                                                       failing_unmarshal));
            MPI_Datatype u = MPI_INT;
            int rc = MPIX_Type_unmarshal("external", bytes, n, &u);
            CHECK(error_kind(rc) == MPIX_MARSHAL_ERR_ATTRIBUTE, "type %d: failing unmarshal gave %d", k, rc);
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            CHECK(strstr(msg, "org.mpix-marshal.test.segments") != NULL, "message '%s' lacks the name", msg);
            CHECK(u == MPI_INT, "type %d: *type written on error", k);
            MPI_OK(MPIX_Type_register_marshaled_keyval(kseg, "org.mpix-marshal.test.segments", size_fn, marshal_fn,
                                                       unmarshal_fn));
        }
        /* Without the keyval for the description, the rest still arrives. */
        if (rank != 0) {
            MPI_OK(MPIX_Type_unregister_marshaled_keyval(kseg));
            MPI_Datatype u;
            MPI_OK(MPIX_Type_unmarshal("external", bytes, n, &u));
            CHECK(get(u, kseg) == NULL, "type %d: an unregistered attribute was set", k);
            MPI_Type_free(&u);
            MPI_OK(MPIX_Type_register_marshaled_keyval(kseg, "org.mpix-marshal.test.segments", size_fn, marshal_fn,
                                                       unmarshal_fn));
        }
        MPI_Type_free(&t);
        if (inner != MPI_DATATYPE_NULL)
            MPI_Type_free(&inner);
        free(bytes);
    }
    CHECK(live_types == before, "%ld datatype handles leaked", live_types - before);
    MPI_Type_free_keyval(&kseg);
    MPI_Type_free_keyval(&ktag);
    int rc = check_report("attrs", rank);
    MPI_Finalize();
    return rc;
}
