module statistics
  use kinds, only: dp
  use vectors, only: dot, norm
  implicit none
contains
  function mean(a) result(m)
    real(dp), intent(in) :: a(:)
    real(dp) :: m
    m = sum(a) / size(a)
  end function mean

  function correlation(a, b) result(r)
    real(dp), intent(in) :: a(:), b(:)
    real(dp) :: r
    real(dp), allocatable :: x(:), y(:)
    x = a - mean(a)
    y = b - mean(b)
    r = dot(x, y) / (norm(x) * norm(y))
  end function correlation
end module statistics
