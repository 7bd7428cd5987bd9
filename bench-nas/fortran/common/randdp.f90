! randlc / vranlc: the NPB pseudo-random number generator
!     x_{k+1} = a * x_k  (mod 2^46),  returned as x_{k+1} * 2^-46,
! computed exactly in double precision by splitting into 23-bit halves
! (NPB report RNR-94-007, section 2.1).  External procedures on purpose.

double precision function randlc(x, a)
  implicit none
  double precision, intent(inout) :: x
  double precision, intent(in) :: a
  double precision, parameter :: r23 = 0.5d0**23, r46 = r23*r23
  double precision, parameter :: t23 = 2.0d0**23, t46 = t23*t23
  double precision :: t1, t2, t3, t4, a1, a2, x1, x2, z

  ! A = 2^23 * A1 + A2
  t1 = r23 * a
  a1 = dble(int(t1))
  a2 = a - t23 * a1

  ! X = 2^23 * X1 + X2; Z = A1*X2 + A2*X1 (mod 2^23);
  ! X = 2^23 * Z + A2*X2 (mod 2^46)
  t1 = r23 * x
  x1 = dble(int(t1))
  x2 = x - t23 * x1
  t1 = a1 * x2 + a2 * x1
  t2 = dble(int(r23 * t1))
  z = t1 - t23 * t2
  t3 = t23 * z + a2 * x2
  t4 = dble(int(r46 * t3))
  x = t3 - t46 * t4
  randlc = r46 * x
end function randlc

subroutine vranlc(n, x, a, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x
  double precision, intent(in) :: a
  double precision, intent(out) :: y(*)
  double precision, parameter :: r23 = 0.5d0**23, r46 = r23*r23
  double precision, parameter :: t23 = 2.0d0**23, t46 = t23*t23
  double precision :: t1, t2, t3, t4, a1, a2, x1, x2, z
  integer :: i

  t1 = r23 * a
  a1 = dble(int(t1))
  a2 = a - t23 * a1

  do i = 1, n
    t1 = r23 * x
    x1 = dble(int(t1))
    x2 = x - t23 * x1
    t1 = a1 * x2 + a2 * x1
    t2 = dble(int(r23 * t1))
    z = t1 - t23 * t2
    t3 = t23 * z + a2 * x2
    t4 = dble(int(r46 * t3))
    x = t3 - t46 * t4
    y(i) = r46 * x
  end do
end subroutine vranlc
