module vectors
  use kinds, only: dp
  implicit none
contains
  function dot(a, b) result(s)
    real(dp), intent(in) :: a(:), b(:)
    real(dp) :: s
    integer :: i
    s = 0
    do i = 1, size(a)
      s = s + a(i) * b(i)
    end do
  end function dot

  function norm(a) result(s)
    real(dp), intent(in) :: a(:)
    real(dp) :: s
    s = sqrt(dot(a, a))
  end function norm

  subroutine scale(a, factor)
    real(dp), intent(inout) :: a(:)
    real(dp), intent(in) :: factor
    a = a * factor
  end subroutine scale
end module vectors
