! Marshal and unmarshal ("external") of a few types through the Fortran
! module mpix_marshal_f08 beside the same loops calling the C API from C
! (bench_c.c), in one run: scripts/fortran-bench.sh. Each figure is the best
! of SWEEPS (default 11) sweeps over all the types, each loop taking about
! SECONDS (default 0.005) of the thread's CPU time (the machine is shared:
! wall time would count the other jobs), in ns per call; unmarshal includes
! the MPI_Type_free of the rebuilt type, in both through the C binding (the
! Fortran loop's through benchc_type_free: MPI_Type_f2c, then the C call),
! so that the difference is the module's alone: Open MPI's Fortran
! MPI_Type_free varied by 50 to 170 ns per call from run to run.
!   bench [SECONDS [SWEEPS]]
program bench
    use mpi_f08
    use mpix_marshal_f08
    use, intrinsic :: iso_c_binding, only: c_int, c_double, c_intptr_t
    use, intrinsic :: iso_fortran_env, only: int8
    implicit none
    interface
        real(c_double) function benchc_marshal(ftype, iters, buf, size) bind(C)
            import :: c_int, c_double, c_intptr_t
            integer(c_int), value :: ftype, iters
            type(*), dimension(*) :: buf
            integer(c_intptr_t), value :: size
        end function
        subroutine benchc_type_free(ftype) bind(C)
            import :: c_int
            integer(c_int), value :: ftype
        end subroutine
        real(c_double) function benchc_now() bind(C)
            import :: c_double
        end function
        real(c_double) function benchc_unmarshal(iters, buf, size, predefined) bind(C)
            import :: c_int, c_double, c_intptr_t
            integer(c_int), value :: iters
            type(*), dimension(*) :: buf
            integer(c_intptr_t), value :: size
            integer(c_int), value :: predefined
        end function
    end interface
    integer, parameter :: ntypes = 5
    integer :: sweeps
    type(MPI_Datatype) :: types(ntypes)
    character(len=24) :: names(ntypes)
    logical :: predefined(ntypes)
    integer :: iters(ntypes), i, s
    real(8) :: best(4, ntypes), t
    integer(int8), allocatable :: buf(:), stream(:)
    integer(MPI_ADDRESS_KIND) :: size, n, sizes(ntypes)
    character(len=32) :: arg
    real(8) :: target_s

    call MPI_Init()
    target_s = 0.005d0
    sweeps = 11
    if (command_argument_count() > 0) then
        call get_command_argument(1, arg)
        read (arg, *) target_s
    end if
    if (command_argument_count() > 1) then
        call get_command_argument(2, arg)
        read (arg, *) sweeps
    end if
    names = [character(len=24) :: 'MPI_INTEGER', 'paper indexed', 'record struct', &
             'HDF5-like nested', 'struct of 1000']
    predefined = [.true., .false., .false., .false., .false.]
    types(1) = MPI_INTEGER
    call MPI_Type_indexed(3, [4, 8, 2], [0, 16, 40], MPI_BYTE, types(2))
    types(3) = record_type()
    types(4) = nested()
    types(5) = struct_1000()
    allocate (buf(1000000))
    size = int(ubound(buf, 1), MPI_ADDRESS_KIND)
    ! Iterations: enough for target_s seconds per figure.
    do i = 1, ntypes
        call MPIX_Type_marshal('external', types(i), buf, size, sizes(i))
        t = benchc_marshal(types(i)%MPI_VAL, 20, buf, size) / 20
        iters(i) = max(10, int(target_s / max(t, 1d-9)))
    end do
    best = huge(1d0)
    do s = 1, sweeps
        do i = 1, ntypes
            call MPIX_Type_marshal('external', types(i), buf, size, n)
            stream = buf(1:n)
            best(1, i) = min(best(1, i), benchc_marshal(types(i)%MPI_VAL, iters(i), buf, size) / iters(i))
            best(2, i) = min(best(2, i), fortran_marshal(types(i), iters(i)) / iters(i))
            best(3, i) = min(best(3, i), benchc_unmarshal(iters(i), stream, n, merge(1, 0, predefined(i))) / iters(i))
            best(4, i) = min(best(4, i), fortran_unmarshal(stream, n, iters(i), predefined(i)) / iters(i))
        end do
    end do
    print '(a)', '| type | stream B | marshal C ns | marshal Fortran ns | ratio | unmarshal C ns | unmarshal Fortran ns | ratio |'
    print '(a)', '|---|---|---|---|---|---|---|---|'
    do i = 1, ntypes
        print '("| ",a," | ",i0," | ",f0.1," | ",f0.1," | ",f0.3," | ",f0.1," | ",f0.1," | ",f0.3," |")', &
            trim(names(i)), sizes(i), best(1, i)*1d9, best(2, i)*1d9, best(2, i)/best(1, i), &
            best(3, i)*1d9, best(4, i)*1d9, best(4, i)/best(3, i)
    end do
    do i = 2, ntypes
        call MPI_Type_free(types(i))
    end do
    call MPI_Finalize()
contains
    real(8) function fortran_marshal(t, n) result(secs)
        type(MPI_Datatype), intent(in) :: t
        integer, intent(in) :: n
        integer :: k, ierr
        integer(MPI_ADDRESS_KIND) :: w
        real(8) :: t0
        t0 = benchc_now()
        do k = 1, n
            call MPIX_Type_marshal('external', t, buf, size, w, ierr)
            if (ierr /= MPI_SUCCESS) error stop 'marshal'
        end do
        secs = benchc_now() - t0
    end function

    real(8) function fortran_unmarshal(bytes, len, n, predef) result(secs)
        integer(int8), intent(in) :: bytes(*)  ! as the C loop's pointer: no contiguity check per call
        integer(MPI_ADDRESS_KIND), intent(in) :: len
        integer, intent(in) :: n
        logical, intent(in) :: predef
        type(MPI_Datatype) :: t
        integer :: k, ierr
        real(8) :: t0
        t0 = benchc_now()
        do k = 1, n
            call MPIX_Type_unmarshal('external', bytes, len, t, ierr)
            if (ierr /= MPI_SUCCESS) error stop 'unmarshal'
            if (.not. predef) call benchc_type_free(t%MPI_VAL)
        end do
        secs = benchc_now() - t0
    end function

    function record_type() result(t)
        type(MPI_Datatype) :: t, s
        call MPI_Type_create_struct(3, [3, 1, 4], [0_MPI_ADDRESS_KIND, 24_MPI_ADDRESS_KIND, 28_MPI_ADDRESS_KIND], &
                                    [MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_INTEGER], s)
        call MPI_Type_create_resized(s, 0_MPI_ADDRESS_KIND, 48_MPI_ADDRESS_KIND, t)
        call MPI_Type_free(s)
        call MPI_Type_set_name(t, 'record')
    end function

    ! The shape of the bench's HDF5 type (tests/common: hdf5_complex's make):
    ! vectors of resized structs five levels deep.
    function nested() result(t)
        type(MPI_Datatype) :: t, x
        call MPI_Type_contiguous(4, MPI_BYTE, x)
        x = vec(5, x)
        x = wrap(x, 0_MPI_ADDRESS_KIND, 40_MPI_ADDRESS_KIND)
        x = vec(5, x)
        x = wrap(x, 2000_MPI_ADDRESS_KIND, 400_MPI_ADDRESS_KIND)
        x = vec(5, x)
        x = wrap(x, 0_MPI_ADDRESS_KIND, 4000_MPI_ADDRESS_KIND)
        x = vec(5, x)
        x = wrap(x, 0_MPI_ADDRESS_KIND, 40000_MPI_ADDRESS_KIND)
        x = vec(1, x)
        t = wrap(x, 160000_MPI_ADDRESS_KIND, 200000_MPI_ADDRESS_KIND)
    end function

    function vec(n, x) result(v)
        integer, intent(in) :: n
        type(MPI_Datatype), intent(in) :: x
        type(MPI_Datatype) :: v, y
        y = x
        call MPI_Type_vector(1, n, 1, y, v)
        call MPI_Type_free(y)
    end function

    function wrap(x, d, u) result(r)
        type(MPI_Datatype), intent(in) :: x
        integer(MPI_ADDRESS_KIND), intent(in) :: d, u
        type(MPI_Datatype) :: r, s, y
        y = x
        if (d == 0) then
            call MPI_Type_create_resized(y, 0_MPI_ADDRESS_KIND, u, r)
        else
            call MPI_Type_create_struct(1, [1], [d], [y], s)
            call MPI_Type_create_resized(s, 0_MPI_ADDRESS_KIND, u, r)
            call MPI_Type_free(s)
        end if
        call MPI_Type_free(y)
    end function

    function struct_1000() result(t)
        type(MPI_Datatype) :: t, pool(5), ty(1000)
        integer :: b(1000), k
        integer(MPI_ADDRESS_KIND) :: d(1000)
        pool = [MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER, MPI_REAL, MPI_INTEGER2]
        do k = 1, 1000
            b(k) = mod(k - 1, 3) + 1
            d(k) = int(k - 1, MPI_ADDRESS_KIND)*40 - 2000
            ty(k) = pool(mod(k - 1, 5) + 1)
        end do
        call MPI_Type_create_struct(1000, b, d, ty, t)
    end function
end program bench
