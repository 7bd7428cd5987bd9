! CG: Conjugate Gradient kernel, Fortran version
! (NPB specification, RNR-94-007 s.2.2.3).  The class is chosen at build
! time by the include path: params/<CLASS>/npbparams_cg.inc.
!
! Same structure as the C version: makea (with sprnvc, vecset, icnvrt)
! builds the matrix, sparse assembles it into compressed rows, and each
! outer iteration calls conj_grad.  The random generator state lives in
! the common block /urando/.

program cg
  implicit none
  include 'npbparams_cg.inc'

  integer, parameter :: nz = na * (nonzer + 1) * (nonzer + 1)
  integer, parameter :: naz = na * (nonzer + 1)

  integer :: colidx(nz), rowstr(na + 1), iv(na), arow(na), acol(nonzer + 1, na)
  double precision :: aelt(nonzer + 1, na), a(nz)
  double precision :: x(na + 2), z(na + 2), p(na + 2), q(na + 2), r(na + 2)

  double precision :: amult, tran
  common /urando/ amult, tran

  integer :: naa, nzz, firstrow, lastrow, firstcol, lastcol
  integer :: i, j, k, it
  double precision :: zeta, rnorm, norm_temp1, norm_temp2, t, mflops, epsilon, err
  logical :: verified
  double precision, external :: randlc, timer_read

  save colidx, rowstr, iv, arow, acol, aelt, a, x, z, p, q, r

  firstrow = 1
  lastrow = na
  firstcol = 1
  lastcol = na

  write (*, '(//,a,//)') ' NAS Parallel Benchmarks (bench-nas Fortran version) - CG Benchmark'
  write (*, '(a,i11)') ' Size: ', na
  write (*, '(a,i5)') ' Iterations: ', niter

  naa = na
  nzz = nz

  tran = 314159265.0d0
  amult = 1220703125.0d0
  zeta = randlc(tran, amult)

  call makea(naa, nzz, a, colidx, rowstr, nonzer, firstrow, lastrow, &
             firstcol, lastcol, rcond, arow, acol, aelt, iv, shift)

  ! Shift column indices to local numbering (a no-op serially).
  do j = 1, lastrow - firstrow + 1
    do k = rowstr(j), rowstr(j + 1) - 1
      colidx(k) = colidx(k) - firstcol + 1
    end do
  end do

  do i = 1, na + 1
    x(i) = 1.0d0
  end do
  do j = 1, lastcol - firstcol + 1
    q(j) = 0.0d0
    z(j) = 0.0d0
    r(j) = 0.0d0
    p(j) = 0.0d0
  end do
  zeta = 0.0d0

  ! One untimed iteration to touch code and data pages.
  do it = 1, 1
    call conj_grad(colidx, rowstr, x, z, a, p, q, r, rnorm, naa, &
                   firstrow, lastrow, firstcol, lastcol)
    norm_temp1 = 0.0d0
    norm_temp2 = 0.0d0
    do j = 1, lastcol - firstcol + 1
      norm_temp1 = norm_temp1 + x(j) * z(j)
      norm_temp2 = norm_temp2 + z(j) * z(j)
    end do
    norm_temp2 = 1.0d0 / sqrt(norm_temp2)
    do j = 1, lastcol - firstcol + 1
      x(j) = norm_temp2 * z(j)
    end do
  end do

  do i = 1, na + 1
    x(i) = 1.0d0
  end do
  zeta = 0.0d0

  call timer_clear(1)
  call timer_start(1)

  do it = 1, niter
    call conj_grad(colidx, rowstr, x, z, a, p, q, r, rnorm, naa, &
                   firstrow, lastrow, firstcol, lastcol)
    norm_temp1 = 0.0d0
    norm_temp2 = 0.0d0
    do j = 1, lastcol - firstcol + 1
      norm_temp1 = norm_temp1 + x(j) * z(j)
      norm_temp2 = norm_temp2 + z(j) * z(j)
    end do
    norm_temp2 = 1.0d0 / sqrt(norm_temp2)
    zeta = shift + 1.0d0 / norm_temp1
    if (it == 1) write (*, '(/,a)') '   iteration           ||r||                 zeta'
    write (*, '(4x,i5,7x,es20.14,f20.13)') it, rnorm, zeta
    do j = 1, lastcol - firstcol + 1
      x(j) = norm_temp2 * z(j)
    end do
  end do

  call timer_stop(1)
  t = timer_read(1)

  write (*, '(a)') ' Benchmark completed'
  epsilon = 1.0d-10
  err = abs(zeta - zeta_verify_value) / zeta_verify_value
  if (err <= epsilon) then
    verified = .true.
    write (*, '(a)') ' VERIFICATION SUCCESSFUL'
    write (*, '(a,es20.13)') ' Zeta is    ', zeta
    write (*, '(a,es20.13)') ' Error is   ', err
  else
    verified = .false.
    write (*, '(a)') ' VERIFICATION FAILED'
    write (*, '(a,es20.13)') ' Zeta                ', zeta
    write (*, '(a,es20.13)') ' The correct zeta is ', zeta_verify_value
  end if

  if (t /= 0.0d0) then
    mflops = dble(2 * niter * na) * (3.0d0 + dble(nonzer * (nonzer + 1)) &
             + 25.0d0 * (5.0d0 + dble(nonzer * (nonzer + 1))) + 3.0d0) / t / 1000000.0d0
  else
    mflops = 0.0d0
  end if

  call print_results('CG', class, na, 0, 0, niter, t, mflops, &
                     '          floating point', verified)
  if (.not. verified) stop 1
end program cg

! Solve A z = x approximately with 25 CG iterations; rnorm = ||x - A z||.
subroutine conj_grad(colidx, rowstr, x, z, a, p, q, r, rnorm, naa, &
                     firstrow, lastrow, firstcol, lastcol)
  implicit none
  integer, intent(in) :: naa, firstrow, lastrow, firstcol, lastcol
  integer, intent(in) :: colidx(*), rowstr(*)
  double precision, intent(in) :: x(*), a(*)
  double precision, intent(inout) :: z(*), p(*), q(*), r(*)
  double precision, intent(out) :: rnorm
  integer :: j, k, cgit
  integer, parameter :: cgitmax = 25
  double precision :: d, sum, rho, rho0, alpha, beta

  rho = 0.0d0

  do j = 1, naa + 1
    q(j) = 0.0d0
    z(j) = 0.0d0
    r(j) = x(j)
    p(j) = r(j)
  end do

  do j = 1, lastcol - firstcol + 1
    rho = rho + r(j) * r(j)
  end do

  do cgit = 1, cgitmax
    ! q = A.p
    do j = 1, lastrow - firstrow + 1
      sum = 0.0d0
      do k = rowstr(j), rowstr(j + 1) - 1
        sum = sum + a(k) * p(colidx(k))
      end do
      q(j) = sum
    end do

    d = 0.0d0
    do j = 1, lastcol - firstcol + 1
      d = d + p(j) * q(j)
    end do

    alpha = rho / d
    rho0 = rho

    rho = 0.0d0
    do j = 1, lastcol - firstcol + 1
      z(j) = z(j) + alpha * p(j)
      r(j) = r(j) - alpha * q(j)
    end do

    do j = 1, lastcol - firstcol + 1
      rho = rho + r(j) * r(j)
    end do

    beta = rho / rho0

    do j = 1, lastcol - firstcol + 1
      p(j) = r(j) + beta * p(j)
    end do
  end do

  ! Residual norm ||x - A.z|| computed explicitly.
  sum = 0.0d0
  do j = 1, lastrow - firstrow + 1
    d = 0.0d0
    do k = rowstr(j), rowstr(j + 1) - 1
      d = d + a(k) * z(colidx(k))
    end do
    r(j) = d
  end do
  do j = 1, lastcol - firstcol + 1
    d = x(j) - r(j)
    sum = sum + d * d
  end do
  rnorm = sqrt(sum)
end subroutine conj_grad

! Generate the sparse matrix as a sum of outer products of sparse random
! vectors (see the C version for the description).
subroutine makea(n, nz, a, colidx, rowstr, nonzer, firstrow, lastrow, &
                 firstcol, lastcol, rcond, arow, acol, aelt, iv, shift)
  implicit none
  integer, intent(in) :: n, nz, nonzer, firstrow, lastrow, firstcol, lastcol
  double precision, intent(in) :: rcond, shift
  integer :: colidx(nz), rowstr(n + 1), iv(n), arow(n), acol(nonzer + 1, n)
  double precision :: a(nz), aelt(nonzer + 1, n)
  integer :: iouter, ivelt, nzv, nn1
  integer :: ivc(nonzer + 1)
  double precision :: vc(nonzer + 1)

  ! nn1 is the smallest power of two not less than n.
  nn1 = 1
  do
    nn1 = 2 * nn1
    if (nn1 >= n) exit
  end do

  do iouter = 1, n
    nzv = nonzer
    call sprnvc(n, nzv, nn1, vc, ivc)
    call vecset(n, vc, ivc, nzv, iouter, 0.5d0)
    arow(iouter) = nzv
    do ivelt = 1, nzv
      acol(ivelt, iouter) = ivc(ivelt)
      aelt(ivelt, iouter) = vc(ivelt)
    end do
  end do

  call sparse(a, colidx, rowstr, n, nz, nonzer, arow, acol, aelt, &
              firstrow, lastrow, firstcol, lastcol, iv, rcond, shift)
end subroutine makea

! Assemble the outer products into compressed row storage, summing
! duplicates and keeping each row sorted by column.
subroutine sparse(a, colidx, rowstr, n, nz, nonzer, arow, acol, aelt, &
                  firstrow, lastrow, firstcol, lastcol, nzloc, rcond, shift)
  implicit none
  integer, intent(in) :: n, nz, nonzer, firstrow, lastrow, firstcol, lastcol
  integer :: colidx(nz), rowstr(n + 1), arow(n), acol(nonzer + 1, n), nzloc(n)
  double precision :: a(nz), aelt(nonzer + 1, n)
  double precision, intent(in) :: rcond, shift
  integer :: nrows, i, j, j1, j2, nza, k, kk, nzrow, jcol
  double precision :: size, scale, ratio, va
  logical :: found

  nrows = lastrow - firstrow + 1
  if (firstcol < 0 .or. lastcol < 0) stop 2

  ! Count the triples in each row.
  do j = 1, nrows + 1
    rowstr(j) = 0
  end do
  do i = 1, n
    do nza = 1, arow(i)
      j = acol(nza, i) + 1
      rowstr(j) = rowstr(j) + arow(i)
    end do
  end do
  rowstr(1) = 1
  do j = 2, nrows + 1
    rowstr(j) = rowstr(j) + rowstr(j - 1)
  end do
  nza = rowstr(nrows + 1) - 1

  if (nza > nz) then
    write (*, '(a)') 'Space for matrix elements exceeded in sparse'
    write (*, '(a,2i12)') 'nza, nzmax = ', nza, nz
    stop 1
  end if

  do j = 1, nrows
    do k = rowstr(j), rowstr(j + 1) - 1
      a(k) = 0.0d0
      colidx(k) = -1
    end do
    nzloc(j) = 0
  end do

  ! Generate the actual values by summing duplicates.
  size = 1.0d0
  ratio = rcond ** (1.0d0 / dble(n))

  do i = 1, n
    do nza = 1, arow(i)
      j = acol(nza, i)
      scale = size * aelt(nza, i)
      do nzrow = 1, arow(i)
        jcol = acol(nzrow, i)
        va = aelt(nzrow, i) * scale

        ! Add rcond*I to bound the smallest eigenvalue, and shift.
        if (jcol == j .and. j == i) then
          va = va + rcond - shift
        end if

        found = .false.
        do k = rowstr(j), rowstr(j + 1) - 1
          if (colidx(k) > jcol) then
            ! Insert here, keeping the row ordered.
            do kk = rowstr(j + 1) - 2, k, -1
              if (colidx(kk) > -1) then
                a(kk + 1) = a(kk)
                colidx(kk + 1) = colidx(kk)
              end if
            end do
            colidx(k) = jcol
            a(k) = 0.0d0
            found = .true.
            exit
          else if (colidx(k) == -1) then
            colidx(k) = jcol
            found = .true.
            exit
          else if (colidx(k) == jcol) then
            ! Mark the duplicated entry.
            nzloc(j) = nzloc(j) + 1
            found = .true.
            exit
          end if
        end do
        if (.not. found) then
          write (*, '(a,i8)') 'internal error in sparse: i=', i
          stop 1
        end if
        a(k) = a(k) + va
      end do
    end do
    size = size * ratio
  end do

  ! Remove empty entries and compact the rows.
  do j = 2, nrows
    nzloc(j) = nzloc(j) + nzloc(j - 1)
  end do

  do j = 1, nrows
    if (j > 1) then
      j1 = rowstr(j) - nzloc(j - 1)
    else
      j1 = 1
    end if
    j2 = rowstr(j + 1) - nzloc(j) - 1
    nza = rowstr(j)
    do k = j1, j2
      a(k) = a(nza)
      colidx(k) = colidx(nza)
      nza = nza + 1
    end do
  end do
  do j = 2, nrows + 1
    rowstr(j) = rowstr(j) - nzloc(j - 1)
  end do
end subroutine sparse

! Sparse random vector with nz distinct nonzero positions in 1..n.
subroutine sprnvc(n, nz, nn1, v, iv)
  implicit none
  integer, intent(in) :: n, nz, nn1
  double precision, intent(out) :: v(*)
  integer, intent(out) :: iv(*)
  double precision :: amult, tran
  common /urando/ amult, tran
  double precision, external :: randlc
  integer, external :: icnvrt
  integer :: nzv, ii, i
  double precision :: vecelt, vecloc
  logical :: was_gen

  nzv = 0
  do while (nzv < nz)
    vecelt = randlc(tran, amult)
    ! An integer between 1 and n in a portable manner.
    vecloc = randlc(tran, amult)
    i = icnvrt(vecloc, nn1) + 1
    if (i > n) cycle

    was_gen = .false.
    do ii = 1, nzv
      if (iv(ii) == i) then
        was_gen = .true.
        exit
      end if
    end do
    if (was_gen) cycle
    nzv = nzv + 1
    v(nzv) = vecelt
    iv(nzv) = i
  end do
end subroutine sprnvc

! Scale a double in [0,1) to an integer in [0, ipwr2).
integer function icnvrt(x, ipwr2)
  implicit none
  double precision, intent(in) :: x
  integer, intent(in) :: ipwr2
  icnvrt = int(ipwr2 * x)
end function icnvrt

! Set v(i) = val in the sparse vector (iv, v), appending if absent.
subroutine vecset(n, v, iv, nzv, i, val)
  implicit none
  integer, intent(in) :: n, i
  integer, intent(inout) :: nzv
  double precision, intent(inout) :: v(*)
  integer, intent(inout) :: iv(*)
  double precision, intent(in) :: val
  integer :: k
  logical :: set

  if (n < 0) stop 2
  set = .false.
  do k = 1, nzv
    if (iv(k) == i) then
      v(k) = val
      set = .true.
    end if
  end do
  if (.not. set) then
    nzv = nzv + 1
    v(nzv) = val
    iv(nzv) = i
  end if
end subroutine vecset
