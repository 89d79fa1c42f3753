/* The checker's C shim: the MPI constants that mpi.h defines as macros
 * (which bindgen skips), the communicator keyval whose delete callback
 * frees the checker's state, and dladdr for user-op identities. Only
 * PMPI_ functions are called here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The status a process exits with after a finding at MPI_Finalize (lost
 * messages, pending sends: check/src/p2p/lost.rs), as valgrind's
 * --error-exitcode: set there, applied when the program exits, after its
 * own code after MPI_Finalize and its atexit handlers have run. */
static int exit_status;
void mxc_set_exit_status(int code) { exit_status = code; }
__attribute__((destructor)) static void mxc_apply_exit_status(void) {
    if (exit_status != 0) {
        fflush(NULL);
        _exit(exit_status);
    }
}

void *mxc_in_place(void) { return MPI_IN_PLACE; }
MPI_Datatype mxc_packed(void) { return MPI_PACKED; }
MPI_Datatype mxc_byte(void) { return MPI_BYTE; }
MPI_Datatype mxc_datatype_null(void) { return MPI_DATATYPE_NULL; }
int mxc_root(void) { return MPI_ROOT; }
int mxc_proc_null(void) { return MPI_PROC_NULL; }
int mxc_err_other(void) { return MPI_ERR_OTHER; }
int mxc_max_object_name(void) { return MPI_MAX_OBJECT_NAME; }
int mxc_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
int mxc_tag_ub_min(void) { return 32767; }
int mxc_topo_cart(void) { return MPI_CART; }
int mxc_topo_graph(void) { return MPI_GRAPH; }
int mxc_topo_dist_graph(void) { return MPI_DIST_GRAPH; }

/* The ranks of MPI_COMM_WORLD on this node (a collective at MPI_Init), or
 * 0 when MPI cannot say; and the node's online cores. */
int mxc_local_ranks(void) {
    MPI_Comm local;
    int n = 0;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) !=
        MPI_SUCCESS)
        return 0;
    PMPI_Comm_size(local, &n);
    PMPI_Comm_free(&local);
    return n;
}
/* This node's host name, NUL-terminated in len bytes ("" when unknown). */
void mxc_host_name(char *name, int len) {
    if (len <= 0) return;
    if (gethostname(name, (size_t)len) != 0) name[0] = 0;
    name[len - 1] = 0;
}
int mxc_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1 << 30 ? 1 << 30 : (int)n;
}

/* Predefined ops, by index (1..): 0 means "not predefined". */
static const char *op_names[] = {
    "MPI_MAX",  "MPI_MIN",  "MPI_SUM",    "MPI_PROD",   "MPI_LAND",    "MPI_BAND", "MPI_LOR",
    "MPI_BOR",  "MPI_LXOR", "MPI_BXOR",   "MPI_MAXLOC", "MPI_MINLOC",  "MPI_REPLACE",
    "MPI_NO_OP",
};

int mxc_op_index(MPI_Op op) {
    MPI_Op ops[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                    MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (op == ops[i])
            return i + 1;
    return 0;
}

const char *mxc_op_name(int index) {
    if (index < 1 || index > (int)(sizeof op_names / sizeof op_names[0]))
        return "a user op";
    return op_names[index - 1];
}

int mxc_op_is_null(MPI_Op op) { return op == MPI_OP_NULL; }

/* The identity of a user function that is the same in every process of
 * one program whatever the address-space layout: FNV-1a of the file name
 * of the object that holds it, xor its offset in that object. */
uint64_t mxc_fn_identity(void (*fn)(void)) {
    Dl_info info;
    uint64_t h = 1469598103934665603ull;
    void *p;
    memcpy(&p, &fn, sizeof p);
    if (!dladdr(p, &info) || !info.dli_fname)
        return (uint64_t)(uintptr_t)p;
    const char *name = strrchr(info.dli_fname, '/');
    name = name ? name + 1 : info.dli_fname;
    for (; *name; name++) {
        h ^= (unsigned char)*name;
        h *= 1099511628211ull;
    }
    return h ^ (uint64_t)((uintptr_t)p - (uintptr_t)info.dli_fbase);
}

/* The communicator keyval: never copied by MPI_Comm_dup, its delete
 * callback hands the state to the Rust side. */
static void (*state_delete)(void *);

static int delete_fn(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)extra;
    if (state_delete)
        state_delete(value);
    return MPI_SUCCESS;
}

int mxc_keyval_create(int *keyval, void (*del)(void *)) {
    state_delete = del;
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, keyval, NULL);
}

/* A user op's function and commutativity, kept by MPI_Op_create. */
typedef void (*user_fn)(void);
user_fn mxc_cast_user_fn(MPI_User_function *f) { return (user_fn)f; }

/* The point-to-point checker's own keyval (check/src/p2p/lifecycle.rs): its delete
 * callback frees the companion channel of a freed communicator. */
static void (*p2p_delete)(void *);

static int p2p_delete_fn(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)extra;
    if (p2p_delete)
        p2p_delete(value);
    return MPI_SUCCESS;
}

int mxc_p2p_keyval_create(int *keyval, void (*del)(void *)) {
    p2p_delete = del;
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, p2p_delete_fn, keyval, NULL);
}

/* The point-to-point checker's error handler (check/src/mpi/errhandler.rs):
   MPI calls it with a variadic tail, which the Rust function does not take. */
static void (*p2p_errhandler)(MPI_Comm *, int *);

static void p2p_errhandler_fn(MPI_Comm *comm, int *code, ...) { p2p_errhandler(comm, code); }

int mxc_p2p_errhandler_create(MPI_Errhandler *eh, void (*f)(MPI_Comm *, int *)) {
    p2p_errhandler = f;
    return PMPI_Comm_create_errhandler(p2p_errhandler_fn, eh);
}

/* Whether eh is one of MPI's predefined handlers (its reference is not freed). */
int mxc_errhandler_predefined(MPI_Errhandler eh) {
#if MPI_VERSION >= 4
    if (eh == MPI_ERRORS_ABORT) return 1;
#endif
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRHANDLER_NULL;
}

int mxc_err_truncate(void) { return MPI_ERR_TRUNCATE; }
int mxc_err_in_status(void) { return MPI_ERR_IN_STATUS; }
/* The classes MPI raises for this process's own arguments. */
int mxc_err_is_argument(int c) {
    return c == MPI_ERR_BUFFER || c == MPI_ERR_COUNT || c == MPI_ERR_TYPE || c == MPI_ERR_TAG ||
           c == MPI_ERR_COMM || c == MPI_ERR_RANK || c == MPI_ERR_ROOT || c == MPI_ERR_OP ||
           c == MPI_ERR_ARG;
}
