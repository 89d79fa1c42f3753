/* Datatypes the C tests marshal: the paper's types and a few more. */
#ifndef TYPES_H
#define TYPES_H
#include <mpi.h>

static MPI_Datatype paper_indexed(void)
{
    int bl[3] = {4, 8, 2}, d[3] = {0, 16, 40};
    MPI_Datatype t;
    MPI_Type_indexed(3, bl, d, MPI_BYTE, &t);
    return t;
}

/* REFERENCE.md's HDF5-derived type in its portable (resized) form. */
static MPI_Datatype wrap(MPI_Datatype x, MPI_Aint d, MPI_Aint u)
{
    MPI_Datatype s, r;
    if (d == 0) {
        MPI_Type_create_resized(x, 0, u, &r);
    } else {
        int one = 1;
        MPI_Type_create_struct(1, &one, &d, &x, &s);
        MPI_Type_create_resized(s, 0, u, &r);
        MPI_Type_free(&s);
    }
    MPI_Type_free(&x);
    return r;
}

static MPI_Datatype vec(int n, MPI_Datatype x)
{
    MPI_Datatype v;
    MPI_Type_vector(1, n, 1, x, &v);
    MPI_Type_free(&x);
    return v;
}

static MPI_Datatype hdf5_make(MPI_Aint d1)
{
    MPI_Datatype ctg;
    MPI_Type_contiguous(4, MPI_BYTE, &ctg);
    MPI_Datatype s1 = wrap(vec(5, ctg), d1, 40);
    MPI_Datatype s2 = wrap(vec(5, s1), 2000, 400);
    MPI_Datatype s3 = wrap(vec(5, s2), 0, 4000);
    MPI_Datatype s4 = wrap(vec(5, s3), 0, 40000);
    return wrap(vec(1, s4), 160000, 200000);
}

static MPI_Datatype hdf5_complex(void)
{
    MPI_Datatype a = hdf5_make(0), b = hdf5_make(20), top;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 0};
    MPI_Datatype t[2] = {a, b};
    MPI_Type_create_struct(2, bl, d, t, &top);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    return top;
}

/* A struct with names at two levels. */
static MPI_Datatype named_struct(void)
{
    MPI_Datatype pair, top;
    MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
    MPI_Type_set_name(pair, "pair of doubles");
    int bl[3] = {1, 2, 3};
    MPI_Aint d[3] = {0, 16, 64};
    MPI_Datatype t[3] = {MPI_INT, pair, MPI_CHAR};
    MPI_Type_create_struct(3, bl, d, t, &top);
    MPI_Type_set_name(top, "particle");
    MPI_Type_free(&pair);
    return top;
}

static MPI_Datatype subarray_type(void)
{
    int sizes[2] = {8, 10}, sub[2] = {3, 4}, starts[2] = {2, 5};
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
    return t;
}
/* Issue 18's struct: five members sharing one hvector handle. MPICH gives
 * it extent 440 and gives five distinct but equal handles 448: a rebuild
 * must keep 440. */
static MPI_Datatype shared_member_struct(void)
{
    MPI_Datatype hv, t;
    MPI_Type_create_hvector(2, 1, 24, MPI_LONG_DOUBLE, &hv);
    int bl[5] = {1, 1, 1, 1, 1};
    MPI_Aint d[5] = {8, 48, 128, 248, 408};
    MPI_Datatype same[5] = {hv, hv, hv, hv, hv};
    MPI_Type_create_struct(5, bl, d, same, &t);
    MPI_Type_free(&hv);
    return t;
}

#endif
