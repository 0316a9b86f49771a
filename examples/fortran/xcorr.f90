! xcorr: ambient-noise cross-correlation of synthetic station-days with seisgpu, from Fortran.
!
! Four stations record one noise field that reaches station s 3*s seconds after station 0,
! plus local noise (1 Hz, two hours; station 2 has a ten-minute gap). Windows of 300 s
! every 150 s, 0.05-0.3 Hz, lags +-30 s, NoisePy's defaults otherwise (rma whitening,
! linear stack). Creates an SG_BACKEND_AUTO context, prints its description, checks known
! answers and stops with a non-zero exit status if one fails:
!   1. pair (i, j) peaks at lag +3*(j - i) s (positive lags: station j later than i);
!   2. pairs without station 2 stack all 46 windows; pairs with it 41 (the gap rejects
!      the five windows that touch it);
!   3. the window flags read back (sg_xcorr_spectra_copy) say the same;
!   4. a window longer than the day is refused with SG_ERR_INVALID_ARGUMENT and a message.
!
! Build: make examples
!   (or: gfortran -c include/seisgpu.f90; gfortran xcorr.f90 -L target/release -lseisgpu)
program xcorr
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use seisgpu
  implicit none

  integer, parameter :: n_sta = 4, n = 7200, n_lags = 61, max_lag = 30, gap_start = 3000, gap_len = 600
  integer :: failures = 0
  type(c_ptr) :: ctx = c_null_ptr, plan = c_null_ptr, spectra = c_null_ptr, none = c_null_ptr
  type(c_ptr), target :: days(1)
  type(sg_xcorr_options) :: o
  integer(c_int32_t) :: st
  real(c_float) :: data(n, n_sta)
  integer(c_int8_t), target :: valid(n, n_sta), kept(46, n_sta)
  real(c_float) :: stacks(n_lags, 6)
  integer(c_int32_t), target :: counts(6)
  integer(c_size_t) :: n_windows, lags, n_pairs, i, j, p
  real(c_double) :: field(n + 3 * n_sta)
  integer(c_int64_t) :: rng = 4242_c_int64_t
  integer :: s, t, k, best, expected_count
  logical :: peaks_ok, counts_ok

  do t = 1, n + 3 * n_sta
    field(t) = gauss()
  end do
  do s = 1, n_sta
    do t = 1, n
      data(t, s) = real(1000.0_c_double * (field(t + 3 * n_sta - 3 * (s - 1)) + 0.5_c_double * gauss()), &
                        c_float)
    end do
  end do
  valid = 1_c_int8_t
  valid(gap_start + 1:gap_start + gap_len, 3) = 0_c_int8_t   ! station 2 (from 0)

  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call ok(st, 'sg_context_create')
  write(*, '(a)') sg_context_description(ctx)

  o = sg_xcorr_options_default()
  o%sampling_rate = 1.0_c_double
  o%cc_len = 300.0_c_double
  o%step = 150.0_c_double
  o%freqmin = 0.05_c_double
  o%freqmax = 0.3_c_double
  o%maxlag = 30.0_c_double
  st = sg_xcorr_plan_create(ctx, o, plan)
  call ok(st, 'sg_xcorr_plan_create')
  st = sg_xcorr_plan_sizes(plan, int(n, c_size_t), n_windows, lags)
  call ok(st, 'sg_xcorr_plan_sizes')
  write(*, '(i0, a, i0, a, i0, a)') n_sta, ' stations: ', n_windows, ' windows, ', lags, ' lags'
  call check(n_windows == 46 .and. lags == n_lags, 'plan sizes')

  st = sg_xcorr_preprocess_f32(plan, data, int(n_sta, c_size_t), int(n, c_size_t), &
                               int(n, c_size_t), c_loc(valid), spectra)
  call ok(st, 'sg_xcorr_preprocess_f32')
  st = sg_xcorr_spectra_copy(spectra, c_null_ptr, c_loc(kept))
  call ok(st, 'sg_xcorr_spectra_copy')
  ! windows w (from 0) touching [3000, 3600): 150 w < 3600 and 150 w + 300 > 3000
  call check(count(kept(:, 3) == 0) == 5 .and. all(kept(:, [1, 2, 4]) == 1), &
             'the gap rejects the five windows touching it, and only those')

  st = sg_xcorr_pair_count(plan, int(n_sta, c_size_t), 0_c_size_t, int(n_sta, c_size_t), &
                           0_c_size_t, int(n_sta, c_size_t), n_pairs)
  call ok(st, 'sg_xcorr_pair_count')
  days(1) = spectra
  st = sg_xcorr_correlate_f32(plan, c_loc(days), 1_c_size_t, 0_c_size_t, int(n_sta, c_size_t), &
                              0_c_size_t, int(n_sta, c_size_t), stacks, int(n_lags, c_size_t), &
                              c_loc(counts))
  call ok(st, 'sg_xcorr_correlate_f32')
  call check(n_pairs == 6, '6 pairs i < j')

  peaks_ok = .true.
  counts_ok = .true.
  do p = 0, n_pairs - 1
    st = sg_xcorr_pair_stations(plan, int(n_sta, c_size_t), 0_c_size_t, int(n_sta, c_size_t), &
                                0_c_size_t, int(n_sta, c_size_t), p, i, j)
    call ok(st, 'sg_xcorr_pair_stations')
    best = maxloc(stacks(:, p + 1), 1)
    k = best - 1 - max_lag
    write(*, '(a, i0, a, i0, a, sp, i0, a, ss, i0, a)') '    pair (', i, ',', j, '): peak at ', k, &
      ' s, ', counts(p + 1), ' windows'
    peaks_ok = peaks_ok .and. k == 3 * int(j - i)
    expected_count = 46
    if (i == 2 .or. j == 2) expected_count = 41
    counts_ok = counts_ok .and. counts(p + 1) == expected_count
  end do
  call check(peaks_ok, 'every pair peaks at lag +3(j - i) s')
  call check(counts_ok, 'window counts: 46, or 41 with the gap')

  ! A day shorter than one window.
  st = sg_xcorr_preprocess_f32(plan, data, 1_c_size_t, 200_c_size_t, 200_c_size_t, c_null_ptr, none)
  write(*, '(a, a)') '    200-sample day: ', sg_last_error()
  call check(st == SG_ERR_INVALID_ARGUMENT .and. .not. c_associated(none), &
             'a window longer than the day is refused')

  call sg_xcorr_spectra_destroy(spectra)
  call sg_xcorr_plan_destroy(plan)
  call sg_context_destroy(ctx)
  if (failures > 0) then
    write(*, '(a)') 'FAILED'
    stop 1
  end if
  write(*, '(a)') 'all checks passed'

contains

  ! Park-Miller generator; Gaussian-ish from 12 uniforms.
  function gauss() result(g)
    real(c_double) :: g
    integer :: m
    g = -6.0_c_double
    do m = 1, 12
      rng = mod(rng * 48271_c_int64_t, 2147483647_c_int64_t)
      g = g + real(rng, c_double) / 2147483647.0_c_double
    end do
  end function gauss

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (cond) then
      write(*, '(a, a)') '  [ok] ', what
    else
      write(*, '(a, a)') '  [FAIL] ', what
      failures = failures + 1
    end if
  end subroutine check

  subroutine ok(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SG_OK) then
      write(error_unit, '(a, a, a, a)') what, ': ', sg_status_name(status), ': ' // sg_last_error()
      stop 1
    end if
  end subroutine ok

end program xcorr
