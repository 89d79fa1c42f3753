/* The MPI this installation was built for (scripts/install.sh defines one
   MPIX_MARSHAL_BUILT_FOR_* macro above). A program compiled against another
   MPI's mpi.h would link, then fail at run time: MPICH's handles are ints,
   Open MPI's pointers, the standard ABI's others again. It stops here. */
#if defined(MPIX_MARSHAL_BUILT_FOR_MPICH)
#if defined(MPI_ABI_VERSION)
#error "mpix_marshal.h was installed for MPICH but this mpi.h is the MPI standard ABI's: compile with MPICH's mpicc (mpicc.mpich), or use the mpix-marshal installed for the ABI"
#elif defined(OMPI_MAJOR_VERSION)
#error "mpix_marshal.h was installed for MPICH but this mpi.h is Open MPI's: compile with MPICH's mpicc (mpicc.mpich), or use the mpix-marshal installed for Open MPI"
#endif
#elif defined(MPIX_MARSHAL_BUILT_FOR_OPENMPI)
#if defined(MPI_ABI_VERSION)
#error "mpix_marshal.h was installed for Open MPI but this mpi.h is the MPI standard ABI's: compile with Open MPI's mpicc (mpicc.openmpi), or use the mpix-marshal installed for the ABI"
#elif !defined(OMPI_MAJOR_VERSION)
#error "mpix_marshal.h was installed for Open MPI but this mpi.h is MPICH's (or another MPI's): compile with Open MPI's mpicc (mpicc.openmpi), or use the mpix-marshal installed for MPICH"
#endif
#elif defined(MPIX_MARSHAL_BUILT_FOR_ABI)
#if !defined(MPI_ABI_VERSION) && defined(OMPI_MAJOR_VERSION)
#error "mpix_marshal.h was installed for the MPI standard ABI but this mpi.h is Open MPI's: compile with the ABI's wrapper (mpicc_abi), or use the mpix-marshal installed for Open MPI"
#elif !defined(MPI_ABI_VERSION)
#error "mpix_marshal.h was installed for the MPI standard ABI but this mpi.h is MPICH's (or another MPI's): compile with the ABI's wrapper (mpicc_abi), or use the mpix-marshal installed for MPICH"
#endif
#endif
