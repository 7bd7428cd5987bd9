! EP: Embarrassingly Parallel kernel, Fortran version
! (NPB specification, RNR-94-007 s.2.2.1).  The class is chosen at build
! time by the include path: params/<CLASS>/npbparams_ep.inc.

program ep
  implicit none
  include 'npbparams_ep.inc'

  integer, parameter :: mk = 16, mm = m - mk, nn = 2**mm, nk = 2**mk, nq = 10
  double precision, parameter :: epsilon = 1.0d-8
  double precision, parameter :: a = 1220703125.0d0, s = 271828183.0d0

  double precision, external :: randlc, timer_read
  double precision :: x(2*nk), q(0:nq-1)
  double precision :: mops, t1, t2, t3, t4, x1, x2, sx, sy, tm, an, gc
  double precision :: sx_verify_value, sy_verify_value, sx_err, sy_err
  double precision :: dum(3)
  integer :: np, i, ik, kk, l, k, nit, k_offset
  logical :: verified

  write (*, '(//,a,//)') ' NAS Parallel Benchmarks (bench-nas Fortran version) - EP Benchmark'
  write (*, '(a,f15.0)') ' Number of random numbers generated: ', 2.0d0**(m+1)

  verified = .false.
  np = nn

  ! Touch the generator routines and the array before timing.
  dum = 1.0d0
  call vranlc(0, dum(1), dum(2), dum(3))
  dum(1) = randlc(dum(2), dum(3))
  x = -1.0d99
  mops = log(sqrt(abs(max(1.0d0, 1.0d0))))

  call timer_clear(1)
  call timer_start(1)

  t1 = a
  call vranlc(0, t1, a, x)

  ! an = a^(2*nk) (mod 2^46)
  t1 = a
  do i = 1, mk + 1
    t2 = randlc(t1, t1)
  end do
  an = t1
  gc = 0.0d0
  sx = 0.0d0
  sy = 0.0d0
  q = 0.0d0

  k_offset = -1
  do k = 1, np
    kk = k_offset + k
    t1 = s
    t2 = an

    ! Seed for batch kk: s * an^kk by binary exponentiation.
    do i = 1, 100
      ik = kk / 2
      if (2 * ik /= kk) t3 = randlc(t1, t2)
      if (ik == 0) exit
      t3 = randlc(t2, t2)
      kk = ik
    end do

    call vranlc(2 * nk, t1, a, x)

    ! Gaussian deviates by acceptance-rejection, tallied in annuli.
    do i = 1, nk
      x1 = 2.0d0 * x(2*i-1) - 1.0d0
      x2 = 2.0d0 * x(2*i) - 1.0d0
      t1 = x1 * x1 + x2 * x2
      if (t1 <= 1.0d0) then
        t2 = sqrt(-2.0d0 * log(t1) / t1)
        t3 = x1 * t2
        t4 = x2 * t2
        l = int(max(abs(t3), abs(t4)))
        q(l) = q(l) + 1.0d0
        sx = sx + t3
        sy = sy + t4
      end if
    end do
  end do

  do i = 0, nq - 1
    gc = gc + q(i)
  end do

  call timer_stop(1)
  tm = timer_read(1)

  nit = 0
  verified = .true.
  if (m == 24) then
    sx_verify_value = -3.247834652034740d+3
    sy_verify_value = -6.958407078382297d+3
  else if (m == 25) then
    sx_verify_value = -2.863319731645753d+3
    sy_verify_value = -6.320053679109499d+3
  else if (m == 28) then
    sx_verify_value = -4.295875165629892d+3
    sy_verify_value = -1.580732573678431d+4
  else
    sx_verify_value = 1.0d0
    sy_verify_value = 1.0d0
    verified = .false.
  end if
  sx_err = abs((sx - sx_verify_value) / sx_verify_value)
  sy_err = abs((sy - sy_verify_value) / sy_verify_value)
  verified = verified .and. (sx_err <= epsilon) .and. (sy_err <= epsilon)

  mops = 2.0d0**(m+1) / tm / 1000000.0d0

  write (*, '(/,a,/)') ' EP Benchmark Results:'
  write (*, '(a,f10.4)') ' CPU Time =', tm
  write (*, '(a,i5)') ' N = 2^', m
  write (*, '(a,f15.0)') ' No. Gaussian Pairs = ', gc
  write (*, '(a,2es25.15)') ' Sums = ', sx, sy
  write (*, '(a)') ' Counts: '
  do i = 0, nq - 1
    write (*, '(i3,f15.0)') i, q(i)
  end do
  if (verified) then
    write (*, '(a,2es11.3)') ' Verification against official NPB values: sx, sy err', sx_err, sy_err
  else
    write (*, '(a,2es25.15)') ' Verification failed; reference sums: ', sx_verify_value, sy_verify_value
  end if

  call print_results('EP', class, 2**(m+1), 0, 0, nit, tm, mops, &
                     'Random numbers generated', verified)
  if (.not. verified) stop 1
end program ep
