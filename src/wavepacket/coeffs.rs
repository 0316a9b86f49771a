//! Operations on coefficients: compression, thresholding, POCS interpolation.
