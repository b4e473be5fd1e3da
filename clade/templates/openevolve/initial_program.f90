! The coffee's temperature over time: reads minutes t on standard input, prints degrees C for each.
module cooling
    implicit none
contains
! EVOLVE-BLOCK-START
    ! A straight line: hot at the start, a fixed loss per minute.
    pure function temperature(t) result(degrees)
        real(8), intent(in) :: t
        real(8) :: degrees
        degrees = 85.0d0 - 2.0d0 * t
    end function temperature
! EVOLVE-BLOCK-END
end module cooling

program main
    use cooling
    implicit none
    real(8) :: t
    integer :: status
    do
        read(*, *, iostat=status) t
        if (status /= 0) exit
        print '(ES25.16)', temperature(t)
    end do
end program main
