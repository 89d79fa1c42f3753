/*
 * The one piece of mpix-marshal that is compiled with the MPI compiler
 * wrapper. It exists because most of what the library needs from mpi.h is
 * preprocessor macros (predefined datatypes are casts or addresses of
 * globals, combiners are enums, MPI-4 large-count calls exist only on some
 * implementations) that Rust bindings cannot see.
 *
 * It exports plain data and thin wrappers; it makes no decisions. Every
 * wrapper returns an MPI error code, or MPIXM_UNSUPPORTED when the local MPI
 * lacks the call.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define MPIXM_UNSUPPORTED (-1)

/* Open MPI 4 hides the MPI-1 items removed in MPI-3.0 (MPI_LB, MPI_UB,
 * MPI_Type_struct, ...) behind a static assertion unless built with
 * --enable-mpi1-compatibility. */
#if defined(OMPI_OMIT_MPI1_COMPAT_DECLS) && OMPI_OMIT_MPI1_COMPAT_DECLS
#define MPIXM_HAVE_MPI1 0
#elif defined(MPI_ABI_VERSION)
/* The MPI-5 standard ABI (mpi_abi.h) has none of them. */
#define MPIXM_HAVE_MPI1 0
#else
#define MPIXM_HAVE_MPI1 1
#endif

#if MPI_VERSION >= 4
#define MPIXM_HAVE_LARGE_COUNT 1
#else
#define MPIXM_HAVE_LARGE_COUNT 0
#endif

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define MPIXM_HAVE_VALUE_INDEX 1
#else
#define MPIXM_HAVE_VALUE_INDEX 0
#endif

/* ---- predefined datatypes -------------------------------------------- */

typedef struct {
    int code;         /* portable code (spec/external.md, "Predefined types") */
    const char *name; /* the MPI name, for messages */
    MPI_Datatype type;
} mpixm_predefined;

/* Canonical entries come before aliases: when two names are the same handle
 * locally, the first one wins when a handle is turned into a code. */
static const mpixm_predefined PREDEFINED[] = {
#define P(code, name) {code, #name, name},
#ifdef MPI_AINT
    P(0x201, MPI_AINT)
#endif
#ifdef MPI_COUNT
    P(0x202, MPI_COUNT)
#endif
#ifdef MPI_OFFSET
    P(0x203, MPI_OFFSET)
#endif
#ifdef MPI_PACKED
    P(0x207, MPI_PACKED)
#endif
#ifdef MPI_SHORT
    P(0x208, MPI_SHORT)
#endif
#ifdef MPI_INT
    P(0x209, MPI_INT)
#endif
#ifdef MPI_LONG
    P(0x20a, MPI_LONG)
#endif
#ifdef MPI_LONG_LONG
    P(0x20b, MPI_LONG_LONG)
#endif
#ifdef MPI_UNSIGNED_SHORT
    P(0x20c, MPI_UNSIGNED_SHORT)
#endif
#ifdef MPI_UNSIGNED
    P(0x20d, MPI_UNSIGNED)
#endif
#ifdef MPI_UNSIGNED_LONG
    P(0x20e, MPI_UNSIGNED_LONG)
#endif
#ifdef MPI_UNSIGNED_LONG_LONG
    P(0x20f, MPI_UNSIGNED_LONG_LONG)
#endif
#ifdef MPI_FLOAT
    P(0x210, MPI_FLOAT)
#endif
#ifdef MPI_C_FLOAT_COMPLEX
    P(0x212, MPI_C_FLOAT_COMPLEX)
#endif
#ifdef MPI_CXX_FLOAT_COMPLEX
    P(0x213, MPI_CXX_FLOAT_COMPLEX)
#endif
#ifdef MPI_DOUBLE
    P(0x214, MPI_DOUBLE)
#endif
#ifdef MPI_C_DOUBLE_COMPLEX
    P(0x216, MPI_C_DOUBLE_COMPLEX)
#endif
#ifdef MPI_CXX_DOUBLE_COMPLEX
    P(0x217, MPI_CXX_DOUBLE_COMPLEX)
#endif
#ifdef MPI_INTEGER
    P(0x219, MPI_INTEGER)
#endif
#ifdef MPI_LOGICAL
    P(0x218, MPI_LOGICAL)
#endif
#ifdef MPI_REAL
    P(0x21a, MPI_REAL)
#endif
#ifdef MPI_COMPLEX
    P(0x21b, MPI_COMPLEX)
#endif
#ifdef MPI_DOUBLE_PRECISION
    P(0x21c, MPI_DOUBLE_PRECISION)
#endif
#ifdef MPI_DOUBLE_COMPLEX
    P(0x21d, MPI_DOUBLE_COMPLEX)
#endif
#ifdef MPI_LONG_DOUBLE
    P(0x220, MPI_LONG_DOUBLE)
#endif
#ifdef MPI_C_LONG_DOUBLE_COMPLEX
    P(0x224, MPI_C_LONG_DOUBLE_COMPLEX)
#endif
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
    P(0x225, MPI_CXX_LONG_DOUBLE_COMPLEX)
#endif
#ifdef MPI_FLOAT_INT
    P(0x228, MPI_FLOAT_INT)
#endif
#ifdef MPI_DOUBLE_INT
    P(0x229, MPI_DOUBLE_INT)
#endif
#ifdef MPI_LONG_INT
    P(0x22a, MPI_LONG_INT)
#endif
#ifdef MPI_2INT
    P(0x22b, MPI_2INT)
#endif
#ifdef MPI_SHORT_INT
    P(0x22c, MPI_SHORT_INT)
#endif
#ifdef MPI_LONG_DOUBLE_INT
    P(0x22d, MPI_LONG_DOUBLE_INT)
#endif
#ifdef MPI_2REAL
    P(0x230, MPI_2REAL)
#endif
#ifdef MPI_2DOUBLE_PRECISION
    P(0x231, MPI_2DOUBLE_PRECISION)
#endif
#ifdef MPI_2INTEGER
    P(0x232, MPI_2INTEGER)
#endif
#ifdef MPI_C_BOOL
    P(0x238, MPI_C_BOOL)
#endif
#ifdef MPI_CXX_BOOL
    P(0x239, MPI_CXX_BOOL)
#endif
#ifdef MPI_WCHAR
    P(0x23c, MPI_WCHAR)
#endif
#ifdef MPI_INT8_T
    P(0x240, MPI_INT8_T)
#endif
#ifdef MPI_UINT8_T
    P(0x241, MPI_UINT8_T)
#endif
#ifdef MPI_CHAR
    P(0x243, MPI_CHAR)
#endif
#ifdef MPI_SIGNED_CHAR
    P(0x244, MPI_SIGNED_CHAR)
#endif
#ifdef MPI_UNSIGNED_CHAR
    P(0x245, MPI_UNSIGNED_CHAR)
#endif
#ifdef MPI_BYTE
    P(0x247, MPI_BYTE)
#endif
#ifdef MPI_INT16_T
    P(0x248, MPI_INT16_T)
#endif
#ifdef MPI_UINT16_T
    P(0x249, MPI_UINT16_T)
#endif
#ifdef MPI_INT32_T
    P(0x250, MPI_INT32_T)
#endif
#ifdef MPI_UINT32_T
    P(0x251, MPI_UINT32_T)
#endif
#ifdef MPI_INT64_T
    P(0x258, MPI_INT64_T)
#endif
#ifdef MPI_UINT64_T
    P(0x259, MPI_UINT64_T)
#endif
#ifdef MPI_INTEGER1
    P(0x2c1, MPI_INTEGER1)
#endif
#ifdef MPI_CHARACTER
    P(0x21e, MPI_CHARACTER)
#endif
#ifdef MPI_INTEGER2
    P(0x2c9, MPI_INTEGER2)
#endif
#ifdef MPI_INTEGER4
    P(0x2d1, MPI_INTEGER4)
#endif
#ifdef MPI_REAL4
    P(0x2d2, MPI_REAL4)
#endif
#ifdef MPI_INTEGER8
    P(0x2d9, MPI_INTEGER8)
#endif
#ifdef MPI_REAL8
    P(0x2da, MPI_REAL8)
#endif
#ifdef MPI_COMPLEX8
    P(0x2db, MPI_COMPLEX8)
#endif
#ifdef MPI_INTEGER16
    P(0x2e1, MPI_INTEGER16)
#endif
#ifdef MPI_REAL16
    P(0x2e2, MPI_REAL16)
#endif
#ifdef MPI_COMPLEX16
    P(0x2e3, MPI_COMPLEX16)
#endif
#ifdef MPI_COMPLEX32
    P(0x2eb, MPI_COMPLEX32)
#endif
#ifdef MPI_LOGICAL1
    P(0x2c0, MPI_LOGICAL1)
#endif
#ifdef MPI_LOGICAL2
    P(0x2c8, MPI_LOGICAL2)
#endif
#ifdef MPI_LOGICAL4
    P(0x2d0, MPI_LOGICAL4)
#endif
#ifdef MPI_LOGICAL8
    P(0x2d8, MPI_LOGICAL8)
#endif
#ifdef MPI_LOGICAL16
    P(0x2e0, MPI_LOGICAL16)
#endif
#ifdef MPI_REAL2
    P(0x2ca, MPI_REAL2)
#endif
#ifdef MPI_COMPLEX4
    P(0x2d3, MPI_COMPLEX4)
#endif
    /* Outside the MPI-5 ABI table: codes of mpix-marshal's own. */
#if MPIXM_HAVE_MPI1
    P(0x380, MPI_LB)
    P(0x381, MPI_UB)
#endif
#ifdef MPI_2COMPLEX
    P(0x382, MPI_2COMPLEX)
#endif
#ifdef MPI_2DOUBLE_COMPLEX
    P(0x383, MPI_2DOUBLE_COMPLEX)
#endif
#ifdef MPIX_C_FLOAT16
    P(0x384, MPIX_C_FLOAT16)
#endif
    /* Aliases: distinct objects in some MPIs, the same handle in others. */
#ifdef MPI_C_COMPLEX
    P(0x390, MPI_C_COMPLEX)
#endif
#ifdef MPI_LONG_LONG_INT
    P(0x391, MPI_LONG_LONG_INT)
#endif
#ifdef MPI_CXX_COMPLEX
    P(0x392, MPI_CXX_COMPLEX)
#endif
#undef P
};

/* Writes the table's address and length. Entries whose handle is
 * MPI_DATATYPE_NULL (MPICH defines MPI_INTEGER16 so when the Fortran
 * compiler lacks it) are left for the caller to skip. */
const mpixm_predefined *mpixm_predefined_table(int *n)
{
    *n = (int)(sizeof(PREDEFINED) / sizeof(PREDEFINED[0]));
    return PREDEFINED;
}

MPI_Datatype mpixm_datatype_null(void) { return MPI_DATATYPE_NULL; }

/* ---- constants ---------------------------------------------------------- */

/* Local values of every constant that MPI_Type_get_envelope and
 * MPI_Type_get_contents can return. A combiner the MPI lacks is -1 (no
 * implementation uses a negative combiner). */
typedef struct {
    int named, dup, contiguous, vector, hvector, indexed, hindexed;
    int indexed_block, hindexed_block, struct_, subarray, darray;
    int f90_real, f90_complex, f90_integer, resized, value_index;
    int hvector_integer, hindexed_integer, struct_integer;
    int order_c, order_fortran;
    int distribute_block, distribute_cyclic, distribute_none, distribute_dflt_darg;
    int undefined, max_object_name;
    int have_large_count, have_mpi1, have_value_index, is_open_mpi;
    int version, subversion;
    int keyval_invalid;
    int root; /* MPI_ROOT, for the exchange's intercommunicator broadcasts */
} mpixm_constants;

void mpixm_get_constants(mpixm_constants *c)
{
    c->named = MPI_COMBINER_NAMED;
    c->dup = MPI_COMBINER_DUP;
    c->contiguous = MPI_COMBINER_CONTIGUOUS;
    c->vector = MPI_COMBINER_VECTOR;
    c->hvector = MPI_COMBINER_HVECTOR;
    c->indexed = MPI_COMBINER_INDEXED;
    c->hindexed = MPI_COMBINER_HINDEXED;
    c->indexed_block = MPI_COMBINER_INDEXED_BLOCK;
    c->hindexed_block = MPI_COMBINER_HINDEXED_BLOCK;
    c->struct_ = MPI_COMBINER_STRUCT;
    c->subarray = MPI_COMBINER_SUBARRAY;
    c->darray = MPI_COMBINER_DARRAY;
    c->f90_real = MPI_COMBINER_F90_REAL;
    c->f90_complex = MPI_COMBINER_F90_COMPLEX;
    c->f90_integer = MPI_COMBINER_F90_INTEGER;
    c->resized = MPI_COMBINER_RESIZED;
#if MPIXM_HAVE_VALUE_INDEX
    c->value_index = MPI_COMBINER_VALUE_INDEX;
#else
    c->value_index = -1;
#endif
#if MPIXM_HAVE_MPI1
    c->hvector_integer = MPI_COMBINER_HVECTOR_INTEGER;
    c->hindexed_integer = MPI_COMBINER_HINDEXED_INTEGER;
    c->struct_integer = MPI_COMBINER_STRUCT_INTEGER;
#else
    c->hvector_integer = -1;
    c->hindexed_integer = -1;
    c->struct_integer = -1;
#endif
    c->order_c = MPI_ORDER_C;
    c->order_fortran = MPI_ORDER_FORTRAN;
    c->distribute_block = MPI_DISTRIBUTE_BLOCK;
    c->distribute_cyclic = MPI_DISTRIBUTE_CYCLIC;
    c->distribute_none = MPI_DISTRIBUTE_NONE;
    c->distribute_dflt_darg = MPI_DISTRIBUTE_DFLT_DARG;
    c->undefined = MPI_UNDEFINED;
    c->max_object_name = MPI_MAX_OBJECT_NAME;
    c->keyval_invalid = MPI_KEYVAL_INVALID;
    c->root = MPI_ROOT;
    c->have_large_count = MPIXM_HAVE_LARGE_COUNT;
    c->have_mpi1 = MPIXM_HAVE_MPI1;
    c->have_value_index = MPIXM_HAVE_VALUE_INDEX;
#ifdef OPEN_MPI
    c->is_open_mpi = 1;
#else
    c->is_open_mpi = 0;
#endif
    c->version = MPI_VERSION;
    c->subversion = MPI_SUBVERSION;
}


/* ---- introspection ------------------------------------------------------ */

/* The envelope with 64-bit numbers; on an MPI without large counts the
 * classic call is used and *nc is 0. */
int mpixm_get_envelope(MPI_Datatype t, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                       MPI_Count *nd, int *combiner)
{
#if MPIXM_HAVE_LARGE_COUNT
    return MPI_Type_get_envelope_c(t, ni, na, nc, nd, combiner);
#else
    int i, a, d, rc = MPI_Type_get_envelope(t, &i, &a, &d, combiner);
    if (rc == MPI_SUCCESS) {
        *ni = i;
        *na = a;
        *nc = 0;
        *nd = d;
    }
    return rc;
#endif
}

int mpixm_get_contents(MPI_Datatype t, MPI_Count ni, MPI_Count na, MPI_Count nc,
                       MPI_Count nd, int *ints, MPI_Aint *addrs, MPI_Count *counts,
                       MPI_Datatype *types)
{
#if MPIXM_HAVE_LARGE_COUNT
    return MPI_Type_get_contents_c(t, ni, na, nc, nd, ints, addrs, counts, types);
#else
    (void)counts;
    if (nc != 0 || ni > INT32_MAX || na > INT32_MAX || nd > INT32_MAX)
        return MPIXM_UNSUPPORTED;
    return MPI_Type_get_contents(t, (int)ni, (int)na, (int)nd, ints, addrs, types);
#endif
}

/* ---- constructors the local MPI may lack --------------------------------- */

#if MPIXM_HAVE_LARGE_COUNT
#define LARGE(call) return call
#else
#define LARGE(call) return MPIXM_UNSUPPORTED
#endif

int mpixm_type_contiguous_c(MPI_Count count, MPI_Datatype old, MPI_Datatype *out)
{
    (void)count; (void)old; (void)out;
    LARGE(MPI_Type_contiguous_c(count, old, out));
}

int mpixm_type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                        MPI_Datatype old, MPI_Datatype *out)
{
    (void)count; (void)blocklength; (void)stride; (void)old; (void)out;
    LARGE(MPI_Type_vector_c(count, blocklength, stride, old, out));
}

int mpixm_type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                MPI_Datatype old, MPI_Datatype *out)
{
    (void)count; (void)blocklength; (void)stride; (void)old; (void)out;
    LARGE(MPI_Type_create_hvector_c(count, blocklength, stride, old, out));
}

int mpixm_type_indexed_c(MPI_Count count, const MPI_Count *blocklengths,
                         const MPI_Count *displs, MPI_Datatype old, MPI_Datatype *out)
{
    (void)count; (void)blocklengths; (void)displs; (void)old; (void)out;
    LARGE(MPI_Type_indexed_c(count, blocklengths, displs, old, out));
}

int mpixm_type_create_hindexed_c(MPI_Count count, const MPI_Count *blocklengths,
                                 const MPI_Count *displs, MPI_Datatype old,
                                 MPI_Datatype *out)
{
    (void)count; (void)blocklengths; (void)displs; (void)old; (void)out;
    LARGE(MPI_Type_create_hindexed_c(count, blocklengths, displs, old, out));
}

int mpixm_type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count *displs, MPI_Datatype old,
                                      MPI_Datatype *out)
{
    (void)count; (void)blocklength; (void)displs; (void)old; (void)out;
    LARGE(MPI_Type_create_indexed_block_c(count, blocklength, displs, old, out));
}

int mpixm_type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                       const MPI_Count *displs, MPI_Datatype old,
                                       MPI_Datatype *out)
{
    (void)count; (void)blocklength; (void)displs; (void)old; (void)out;
    LARGE(MPI_Type_create_hindexed_block_c(count, blocklength, displs, old, out));
}

int mpixm_type_create_struct_c(MPI_Count count, const MPI_Count *blocklengths,
                               const MPI_Count *displs, const MPI_Datatype *types,
                               MPI_Datatype *out)
{
    (void)count; (void)blocklengths; (void)displs; (void)types; (void)out;
    LARGE(MPI_Type_create_struct_c(count, blocklengths, displs, types, out));
}

int mpixm_type_create_subarray_c(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                                 const MPI_Count *starts, int order, MPI_Datatype old,
                                 MPI_Datatype *out)
{
    (void)ndims; (void)sizes; (void)subsizes; (void)starts; (void)order; (void)old; (void)out;
    LARGE(MPI_Type_create_subarray_c(ndims, sizes, subsizes, starts, order, old, out));
}

int mpixm_type_create_darray_c(int size, int rank, int ndims, const MPI_Count *gsizes,
                               const int *distribs, const int *dargs, const int *psizes,
                               int order, MPI_Datatype old, MPI_Datatype *out)
{
    (void)size; (void)rank; (void)ndims; (void)gsizes; (void)distribs; (void)dargs;
    (void)psizes; (void)order; (void)old; (void)out;
    LARGE(MPI_Type_create_darray_c(size, rank, ndims, gsizes, distribs, dargs, psizes, order,
                                   old, out));
}

int mpixm_type_create_resized_c(MPI_Count lb, MPI_Count extent, MPI_Datatype old,
                                MPI_Datatype *out)
{
    (void)lb; (void)extent; (void)old; (void)out;
    LARGE(MPI_Type_create_resized_c(old, lb, extent, out));
}
#undef LARGE

/* The MPI-1 constructors, removed in MPI-3.0; they are the only way to make
 * the *_INTEGER combiners. */
#if MPIXM_HAVE_MPI1
#define MPI1(call) return call
#else
#define MPI1(call) return MPIXM_UNSUPPORTED
#endif

int mpixm_type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                       MPI_Datatype *out)
{
    (void)count; (void)blocklength; (void)stride; (void)old; (void)out;
    MPI1(MPI_Type_hvector(count, blocklength, stride, old, out));
}

int mpixm_type_hindexed(int count, int *blocklengths, MPI_Aint *displs, MPI_Datatype old,
                        MPI_Datatype *out)
{
    (void)count; (void)blocklengths; (void)displs; (void)old; (void)out;
    MPI1(MPI_Type_hindexed(count, blocklengths, displs, old, out));
}

int mpixm_type_struct(int count, int *blocklengths, MPI_Aint *displs, MPI_Datatype *types,
                      MPI_Datatype *out)
{
    (void)count; (void)blocklengths; (void)displs; (void)types; (void)out;
    MPI1(MPI_Type_struct(count, blocklengths, displs, types, out));
}
#undef MPI1

int mpixm_type_get_value_index(MPI_Datatype value, MPI_Datatype index, MPI_Datatype *out)
{
    (void)value; (void)index; (void)out;
#if MPIXM_HAVE_VALUE_INDEX
    return MPI_Type_get_value_index(value, index, out);
#else
    return MPIXM_UNSUPPORTED;
#endif
}

/* MPI_Type_create_f90_{real,complex,integer} (which = 0, 1, 2), called by
 * src/mpi/f90.rs under its lock. Whether a (p, r) pair exists depends on
 * the MPI's Fortran kinds, which only the call itself can tell. A pair the
 * caller knows to exist is asked directly (guarded = 0). For any other, so
 * that a pair the local MPI lacks is an error return and not an abort, the
 * call runs with MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF
 * (implementations raise datatype errors on one or the other), and the
 * handlers are restored afterwards. */
static int mpixm_f90_call(int which, int p, int r, MPI_Datatype *out)
{
    if (which == 0)
        return MPI_Type_create_f90_real(p, r, out);
    if (which == 1)
        return MPI_Type_create_f90_complex(p, r, out);
    return MPI_Type_create_f90_integer(r, out);
}

int mpixm_type_create_f90(int which, int p, int r, int guarded, MPI_Datatype *out)
{
    if (!guarded)
        return mpixm_f90_call(which, p, r, out);
    MPI_Errhandler world, self;
    int rc = MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    if (rc != MPI_SUCCESS) {
        MPI_Errhandler_free(&world);
        return rc;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = mpixm_f90_call(which, p, r, out);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
    MPI_Errhandler_free(&world);
    MPI_Errhandler_free(&self);
    return rc;
}

/* Sets *flag to 1 when MPI_Finalize runs and calls on_finalize:
 * MPI_Finalize deletes the attributes of MPI_COMM_SELF first, which calls
 * this delete callback. It lets the library test "MPI is usable" with one
 * load instead of two MPI calls on every marshal. The hook is passed in
 * rather than named so the shared library exports no helper symbol. */
static void (*mpixm_finalize_hook)(void);

static int mpixm_on_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    *(volatile int *)value = 1;
    if (mpixm_finalize_hook)
        mpixm_finalize_hook();
    return MPI_SUCCESS;
}

int mpixm_watch_finalize(volatile int *flag, void (*on_finalize)(void))
{
    int keyval;
    mpixm_finalize_hook = on_finalize;
    int rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, mpixm_on_finalize, &keyval, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Comm_set_attr(MPI_COMM_SELF, keyval, (void *)flag);
    /* MPI keeps the keyval until MPI_Finalize deletes the attribute. */
    MPI_Comm_free_keyval(&keyval);
    return rc;
}

/* Marshalled attributes: MPI_Type_free_keyval is wrapped in Rust
 * (src/attributes.rs, exported by both libraries), which frees the keyval
 * through PMPI with this. */
int mpixm_pmpi_type_free_keyval(int *type_keyval)
{
    return PMPI_Type_free_keyval(type_keyval);
}

/* The MPI this library is compiled for, as its mpi.h says: "MPICH 4.0.2",
 * "Open MPI 4.1.4", "the MPI standard ABI" (the running library may then be
 * any implementation of it), or "" for another mpi.h. */
#define MPIXM_STR_(x) #x
#define MPIXM_STR(x) MPIXM_STR_(x)
const char *mpixm_built_for(void)
{
#if defined(MPI_ABI_VERSION)
    return "the MPI standard ABI";
#elif defined(OMPI_MAJOR_VERSION)
    return "Open MPI " MPIXM_STR(OMPI_MAJOR_VERSION) "." MPIXM_STR(OMPI_MINOR_VERSION) "." MPIXM_STR(
        OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
    return "MPICH " MPICH_VERSION;
#else
    return "";
#endif
}
