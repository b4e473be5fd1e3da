! Six circles in the unit square: prints one circle a line, `x y r` (centre and radius).
module packing
    implicit none
    integer, parameter :: circles = 6
contains
! EVOLVE-BLOCK-START
    ! Equal circles on a grid: three columns, two rows.
    subroutine pack(x, y, r)
        real(8), intent(out) :: x(circles), y(circles), r(circles)
        integer :: k
        do k = 0, circles - 1
            x(k + 1) = (mod(k, 3) + 0.5d0) / 3.0d0
            y(k + 1) = (k / 3 + 0.5d0) / 2.0d0
            r(k + 1) = 0.15d0
        end do
    end subroutine pack
! EVOLVE-BLOCK-END
end module packing

program main
    use packing
    implicit none
    real(8) :: x(circles), y(circles), r(circles)
    integer :: k
    call pack(x, y, r)
    do k = 1, circles
        print '(3F16.12)', x(k), y(k), r(k)
    end do
end program main
