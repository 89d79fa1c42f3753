/* The C side of the Fortran bindings (fortran/mpix_marshal_f08.f90 and
 * fortran/mpix_marshal.f90): each function takes Fortran handles
 * (MPI_Fint), Fortran strings as address and length, and calls the C API
 * with the handles converted by the MPI's own MPI_*_f2c and _c2f. Built
 * with the MPI's mpicc into libmpix_marshal_f.so (fortran/build.sh). The
 * names start with mpixf_ and are no API: the modules are. */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "mpix_marshal.h"

/* The C handle of a Fortran datatype handle. MPICH's MPI_Type_f2c is a
 * cast; Open MPI's is a function that looks the index up under a lock (3 ns
 * measured, a tenth of a predefined type's marshal). The predefined types
 * are never freed, so their indices never change hands: theirs are kept in
 * a table made once, and any other handle goes to MPI_Type_f2c. */
#ifdef OMPI_MAJOR_VERSION
#define PREDEFINED_MAX 256
static MPI_Datatype predefined[PREDEFINED_MAX];
static pthread_once_t predefined_once = PTHREAD_ONCE_INIT;
static int predefined_ready; /* read with an acquire load: no call once set */

static void predefined_fill(void)
{
    const MPI_Datatype types[] = {
        MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG, MPI_SIGNED_CHAR,
        MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG,
        MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_BYTE, MPI_PACKED,
        MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX,
        MPI_LOGICAL, MPI_CHARACTER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8,
        MPI_REAL4, MPI_REAL8, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_INT8_T, MPI_INT16_T,
        MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        MPI_Fint f = MPI_Type_c2f(types[i]);
        if (types[i] != MPI_DATATYPE_NULL && f >= 0 && f < PREDEFINED_MAX)
            predefined[f] = types[i];
    }
    __atomic_store_n(&predefined_ready, 1, __ATOMIC_RELEASE);
}

static MPI_Datatype type_f2c(MPI_Fint f)
{
    if (f >= 0 && f < PREDEFINED_MAX) {
        if (!__atomic_load_n(&predefined_ready, __ATOMIC_ACQUIRE))
            pthread_once(&predefined_once, predefined_fill);
        if (predefined[f] != NULL)
            return predefined[f];
    }
    return MPI_Type_f2c(f);
}
#else
#define type_f2c(f) MPI_Type_f2c(f)
#endif

/* A Fortran CHARACTER(*) (address, length) as a C string: the trailing
 * blanks cut, copied into buf (of size n) when it fits, else into memory
 * the caller frees (*heap). The representation names are short. */
static inline const char *c_string(const char *s, size_t len, char *buf, size_t n, char **heap)
{
    char *out = buf;
    *heap = NULL;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    /* The three names as literals: no copy (a tenth of a small type's marshal). */
    if (len == 8 && memcmp(s, "external", 8) == 0)
        return "external";
    if (len == 8 && memcmp(s, "internal", 8) == 0)
        return "internal";
    if (len == 10 && memcmp(s, "compressed", 10) == 0)
        return "compressed";
    if (len + 1 > n) {
        *heap = out = malloc(len + 1);
        if (!out)
            return "";
    }
    memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

#define TYPEREP(s, len)                                                                            \
    char rep_buf_[32];                                                                             \
    char *rep_heap_;                                                                               \
    const char *rep_ = c_string((s), (size_t)(len), rep_buf_, sizeof rep_buf_, &rep_heap_)
/* free(NULL) is a call through the PLT: a tenth of a small type's marshal. */
#define TYPEREP_FREE()                                                                             \
    do {                                                                                           \
        if (rep_heap_)                                                                             \
            free(rep_heap_);                                                                       \
    } while (0)

int mpixf_marshal(const char *typerep, MPI_Fint typerep_len, MPI_Fint type, void *outbuf,
                  MPI_Aint outsize, MPI_Aint *num_written)
{
    TYPEREP(typerep, typerep_len);
    int rc = MPIX_Type_marshal(rep_, type_f2c(type), outbuf, outsize, num_written);
    TYPEREP_FREE();
    return rc;
}

int mpixf_marshal_size(const char *typerep, MPI_Fint typerep_len, MPI_Fint type, MPI_Aint *size)
{
    TYPEREP(typerep, typerep_len);
    int rc = MPIX_Type_marshal_size(rep_, type_f2c(type), size);
    TYPEREP_FREE();
    return rc;
}

int mpixf_unmarshal(const char *typerep, MPI_Fint typerep_len, const void *inbuf, MPI_Aint insize,
                    MPI_Fint *type)
{
    TYPEREP(typerep, typerep_len);
    MPI_Datatype t;
    int rc = MPIX_Type_unmarshal(rep_, inbuf, insize, &t);
    TYPEREP_FREE();
    if (rc == MPI_SUCCESS)
        *type = MPI_Type_c2f(t);
    return rc;
}

/* Keyvals registered from Fortran. The C library calls the trampolines
 * below; each finds the keyval's entry and calls the module's dispatcher
 * (a BIND(C) procedure of mpix_marshal_f08 or mpix_marshal, which have
 * different handle types) with the user's procedure, which the dispatcher
 * turns back into a procedure pointer and calls with Fortran strings and
 * handles. A procedure the user did not give is NULL here and for the C
 * library. */
typedef void (*fproc)(void);
typedef int (*fsize_dispatch)(fproc user, MPI_Fint keyval, const char *name, MPI_Fint name_len,
                              const char *rep, MPI_Fint rep_len, MPI_Fint type, MPI_Aint *size);
typedef int (*fmarshal_dispatch)(fproc user, MPI_Fint keyval, const char *name, MPI_Fint name_len,
                                 const char *rep, MPI_Fint rep_len, MPI_Fint type, void *outbuf,
                                 MPI_Aint outsize, MPI_Aint *num_written);
typedef int (*funmarshal_dispatch)(fproc user, MPI_Fint keyval, const char *name,
                                   MPI_Fint name_len, const char *rep, MPI_Fint rep_len,
                                   MPI_Fint type, const void *inbuf, MPI_Aint insize);
struct fkeyval {
    int keyval;
    fsize_dispatch size;
    fproc size_fn;
    fmarshal_dispatch marshal;
    fproc marshal_fn;
    funmarshal_dispatch unmarshal;
    fproc unmarshal_fn;
};
static pthread_mutex_t fkeyvals_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fkeyval *fkeyvals;
static size_t fkeyvals_len, fkeyvals_cap;

/* The entry of keyval into *out; 0 when there is none. */
static int fkeyval_find(int keyval, struct fkeyval *out)
{
    int found = 0;
    pthread_mutex_lock(&fkeyvals_lock);
    for (size_t i = 0; i < fkeyvals_len && !found; i++)
        if (fkeyvals[i].keyval == keyval) {
            *out = fkeyvals[i];
            found = 1;
        }
    pthread_mutex_unlock(&fkeyvals_lock);
    return found;
}

/* Sets (or, with e NULL, removes) keyval's entry; the old one into *old
 * (keyval -1 when there was none). MPI_ERR_NO_MEM when it cannot grow. */
static int fkeyval_set(int keyval, const struct fkeyval *e, struct fkeyval *old)
{
    int rc = MPI_SUCCESS;
    size_t i = 0;
    pthread_mutex_lock(&fkeyvals_lock);
    while (i < fkeyvals_len && fkeyvals[i].keyval != keyval)
        i++;
    old->keyval = -1;
    if (i < fkeyvals_len) {
        *old = fkeyvals[i];
        if (e)
            fkeyvals[i] = *e;
        else
            fkeyvals[i] = fkeyvals[--fkeyvals_len];
    } else if (e) {
        if (fkeyvals_len == fkeyvals_cap) {
            size_t cap = fkeyvals_cap ? 2 * fkeyvals_cap : 8;
            struct fkeyval *grown = realloc(fkeyvals, cap * sizeof *grown);
            if (grown) {
                fkeyvals = grown;
                fkeyvals_cap = cap;
            }
        }
        if (fkeyvals_len < fkeyvals_cap)
            fkeyvals[fkeyvals_len++] = *e;
        else
            rc = MPI_ERR_NO_MEM;
    }
    pthread_mutex_unlock(&fkeyvals_lock);
    return rc;
}

static int fkeyval_size(int keyval, const char *name, const char *rep, MPI_Datatype type,
                        MPI_Aint *size)
{
    struct fkeyval k;
    if (!fkeyval_find(keyval, &k) || !k.size)
        return MPI_ERR_KEYVAL;
    return k.size(k.size_fn, keyval, name, (MPI_Fint)strlen(name), rep, (MPI_Fint)strlen(rep),
                  MPI_Type_c2f(type), size);
}

static int fkeyval_marshal(int keyval, const char *name, const char *rep, MPI_Datatype type,
                           void *outbuf, MPI_Aint outsize, MPI_Aint *num_written)
{
    struct fkeyval k;
    if (!fkeyval_find(keyval, &k) || !k.marshal)
        return MPI_ERR_KEYVAL;
    return k.marshal(k.marshal_fn, keyval, name, (MPI_Fint)strlen(name), rep,
                     (MPI_Fint)strlen(rep), MPI_Type_c2f(type), outbuf, outsize, num_written);
}

static int fkeyval_unmarshal(int keyval, const char *name, const char *rep, MPI_Datatype type,
                             const void *inbuf, MPI_Aint insize)
{
    struct fkeyval k;
    if (!fkeyval_find(keyval, &k) || !k.unmarshal)
        return MPI_ERR_KEYVAL;
    return k.unmarshal(k.unmarshal_fn, keyval, name, (MPI_Fint)strlen(name), rep,
                       (MPI_Fint)strlen(rep), MPI_Type_c2f(type), inbuf, insize);
}

/* The user's procedures (size_fn, ...) come with the dispatcher of their
 * module; a procedure not given is NULL. */
int mpixf_register_marshaled_keyval(MPI_Fint keyval, const char *name, MPI_Fint name_len,
                                    fsize_dispatch size, fproc size_fn,
                                    fmarshal_dispatch marshal, fproc marshal_fn,
                                    funmarshal_dispatch unmarshal, fproc unmarshal_fn)
{
    struct fkeyval e = {(int)keyval, size_fn ? size : NULL, size_fn,
                        marshal_fn ? marshal : NULL, marshal_fn,
                        unmarshal_fn ? unmarshal : NULL, unmarshal_fn};
    struct fkeyval old, ignored;
    int rc = fkeyval_set(e.keyval, &e, &old);
    if (rc != MPI_SUCCESS)
        return rc;
    TYPEREP(name, name_len);
    rc = MPIX_Type_register_marshaled_keyval(e.keyval, rep_, e.size ? fkeyval_size : NULL,
                                             e.marshal ? fkeyval_marshal : NULL,
                                             e.unmarshal ? fkeyval_unmarshal : NULL);
    TYPEREP_FREE();
    if (rc != MPI_SUCCESS) /* the C library kept the old registration */
        fkeyval_set(e.keyval, old.keyval == -1 ? NULL : &old, &ignored);
    return rc;
}

int mpixf_unregister_marshaled_keyval(MPI_Fint keyval)
{
    struct fkeyval old;
    int rc = MPIX_Type_unregister_marshaled_keyval((int)keyval);
    if (rc == MPI_SUCCESS)
        fkeyval_set((int)keyval, NULL, &old);
    return rc;
}

int mpixf_signature_hash(MPI_Fint type, MPI_Fint kind, uint64_t *hash)
{
    return MPIX_Type_signature_hash(type_f2c(type), (int)kind, hash);
}

int mpixf_signature_prefix_hash(MPI_Fint type, MPI_Count count, MPI_Count n, MPI_Fint kind,
                                uint64_t *hash)
{
    return MPIX_Type_signature_prefix_hash(type_f2c(type), count, n, (int)kind, hash);
}

int mpixf_marshaled_signature_hash(const char *typerep, MPI_Fint typerep_len, const void *inbuf,
                                   MPI_Aint insize, uint64_t *hash)
{
    TYPEREP(typerep, typerep_len);
    int rc = MPIX_Type_marshaled_signature_hash(rep_, inbuf, insize, hash);
    TYPEREP_FREE();
    return rc;
}

int mpixf_signature_count(MPI_Fint type, MPI_Count *count)
{
    return MPIX_Type_signature_count(type_f2c(type), count);
}

/* explanation: a Fortran CHARACTER of explanation_len (or NULL): the C
 * string is written, then the rest blank-filled, as MPI_Error_string's
 * Fortran binding leaves its string. */
int mpixf_compare(MPI_Fint type_a, MPI_Fint type_b, MPI_Fint level, MPI_Fint *result,
                  char *explanation, MPI_Fint explanation_len)
{
    int res = 0, rc;
    if (explanation == NULL || explanation_len <= 0) {
        rc = MPIX_Type_compare(type_f2c(type_a), type_f2c(type_b), (int)level, &res, NULL,
                               0);
    } else {
        char small[512];
        char *buf = small;
        size_t n = (size_t)explanation_len + 1;
        if (n > sizeof small && !(buf = malloc(n)))
            buf = small, n = sizeof small;
        buf[0] = '\0';
        rc = MPIX_Type_compare(type_f2c(type_a), type_f2c(type_b), (int)level, &res, buf,
                               (int)n);
        if (rc == MPI_SUCCESS) {
            const char *end = memchr(buf, '\0', (size_t)explanation_len);
            size_t len = end ? (size_t)(end - buf) : (size_t)explanation_len;
            memcpy(explanation, buf, len);
            memset(explanation + len, ' ', (size_t)explanation_len - len);
        }
        if (buf != small)
            free(buf);
    }
    if (rc == MPI_SUCCESS)
        *result = res;
    return rc;
}

int mpixf_error_kind(MPI_Fint errorcode, MPI_Fint *kind)
{
    int k = 0;
    int rc = MPIX_Type_marshal_error_kind((int)errorcode, &k);
    if (rc == MPI_SUCCESS)
        *kind = k;
    return rc;
}

int mpixf_send(MPI_Fint type, MPI_Fint dest, MPI_Fint tag, MPI_Fint comm)
{
    return MPIX_Type_send(type_f2c(type), (int)dest, (int)tag, MPI_Comm_f2c(comm));
}

/* status: a Fortran INTEGER status (MPI_STATUS_SIZE), or the Fortran
 * MPI_STATUS_IGNORE (MPI_F_STATUS_IGNORE here), or NULL. */
int mpixf_recv(MPI_Fint *type, MPI_Fint source, MPI_Fint tag, MPI_Fint comm, MPI_Fint *status)
{
    MPI_Datatype t;
    MPI_Status s;
    int ignore = status == NULL || status == MPI_F_STATUS_IGNORE;
    int rc = MPIX_Type_recv(&t, (int)source, (int)tag, MPI_Comm_f2c(comm),
                            ignore ? MPI_STATUS_IGNORE : &s);
    if (rc == MPI_SUCCESS) {
        *type = MPI_Type_c2f(t);
        if (!ignore)
            MPI_Status_c2f(&s, status);
    }
    return rc;
}

/* The status of the f08 binding: source, tag and error (its public
 * fields), so that any MPI's TYPE(MPI_Status) can take them. */
int mpixf_recv_f08(MPI_Fint *type, MPI_Fint source, MPI_Fint tag, MPI_Fint comm,
                   MPI_Fint *status_source, MPI_Fint *status_tag, MPI_Fint *status_error)
{
    MPI_Datatype t;
    MPI_Status s;
    int rc = MPIX_Type_recv(&t, (int)source, (int)tag, MPI_Comm_f2c(comm), &s);
    if (rc == MPI_SUCCESS) {
        *type = MPI_Type_c2f(t);
        *status_source = s.MPI_SOURCE;
        *status_tag = s.MPI_TAG;
        *status_error = s.MPI_ERROR;
    }
    return rc;
}

/* Two Fortran arguments passed by reference: are they the same object
 * (the status argument and MPI_STATUS_IGNORE)? */
int mpixf_same_object(const void *a, const void *b)
{
    return a == b;
}

int mpixf_bcast(MPI_Fint *type, MPI_Fint root, MPI_Fint comm)
{
    MPI_Datatype t = type_f2c(*type);
    int rc = MPIX_Type_bcast(&t, (int)root, MPI_Comm_f2c(comm));
    if (rc == MPI_SUCCESS)
        *type = MPI_Type_c2f(t);
    return rc;
}

int mpixf_exchange_setup(MPI_Fint comm)
{
    return MPIX_Type_exchange_setup(MPI_Comm_f2c(comm));
}

int mpixf_reference(MPI_Fint type, MPI_Fint dest, MPI_Fint comm, void *ref)
{
    return MPIX_Type_reference(type_f2c(type), (int)dest, MPI_Comm_f2c(comm), ref);
}

int mpixf_resolve(const void *ref, MPI_Fint source, MPI_Fint comm, MPI_Fint *type)
{
    MPI_Datatype t;
    int rc = MPIX_Type_resolve(ref, (int)source, MPI_Comm_f2c(comm), &t);
    if (rc == MPI_SUCCESS)
        *type = MPI_Type_c2f(t);
    return rc;
}

int mpixf_release(MPI_Fint *type)
{
    MPI_Datatype t = type_f2c(*type);
    int rc = MPIX_Type_release(&t);
    if (rc == MPI_SUCCESS)
        *type = MPI_Type_c2f(t);
    return rc;
}

int mpixf_exchange_set_cache_limit(MPI_Fint limit)
{
    return MPIX_Type_exchange_set_cache_limit((int)limit);
}

int mpixf_get_version(MPI_Fint *major, MPI_Fint *minor, MPI_Fint *patch)
{
    int a, b, c;
    int rc = MPIX_Marshal_get_version(&a, &b, &c);
    if (rc == MPI_SUCCESS) {
        *major = a;
        *minor = b;
        *patch = c;
    }
    return rc;
}
