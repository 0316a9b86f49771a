// Reading a post-stack 2D SEG-Y section with fixed-length traces (rev 0/1, big-endian,
// IBM or IEEE floats).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct Section {
    std::size_t n_traces = 0;
    std::size_t n_samples = 0;
    double dt_s = 0.0;
    std::vector<float> samples; // trace t at samples[t * n_samples]
};

// The section in `path`; throws std::runtime_error saying why it cannot be read.
Section read_segy(const std::string &path);
