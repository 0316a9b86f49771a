#include "segy.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace {

uint32_t be32(const unsigned char *p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

int be16(const unsigned char *p) { return int16_t(uint16_t(p[0] << 8 | p[1])); }

// IBM System/360 single precision: (-1)^s · 0.F · 16^(e − 64).
float ibm_to_float(uint32_t word) {
    const int exponent16 = int((word >> 24) & 0x7f) - 64;
    const double magnitude = std::ldexp(double(word & 0x00ffffffu), 4 * exponent16 - 24);
    return float(word >> 31 ? -magnitude : magnitude);
}

float ieee_to_float(uint32_t word) {
    float f;
    std::memcpy(&f, &word, sizeof f);
    return f;
}

} // namespace

Section read_segy(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot open " + path);
    }
    const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    const std::size_t text = 3200, binary = 400, trace_header = 240;
    if (file.size() < text + binary) {
        throw std::runtime_error(path + " is too short for a SEG-Y file");
    }
    const unsigned char *bin = file.data() + text;
    const int interval_us = be16(bin + 16), n_samples = be16(bin + 20), format = be16(bin + 24);
    const int n_extended = be16(bin + 304);
    if (n_samples <= 0 || interval_us <= 0 || n_extended < 0) {
        throw std::runtime_error(path + ": unreadable binary header");
    }
    if (format != 1 && format != 5) {
        throw std::runtime_error(path + ": sample format " + std::to_string(format) +
                                 " (only 1, IBM, and 5, IEEE, are read)");
    }
    const std::size_t start = text + binary + std::size_t(n_extended) * text;
    const std::size_t trace_bytes = trace_header + 4 * std::size_t(n_samples);
    if (file.size() <= start || (file.size() - start) % trace_bytes != 0) {
        throw std::runtime_error(path + ": not whole traces of " + std::to_string(n_samples) +
                                 " samples");
    }
    Section s;
    s.n_traces = (file.size() - start) / trace_bytes;
    s.n_samples = std::size_t(n_samples);
    s.dt_s = interval_us * 1e-6;
    s.samples.resize(s.n_traces * s.n_samples);
    for (std::size_t t = 0; t < s.n_traces; ++t) {
        const unsigned char *p = file.data() + start + t * trace_bytes + trace_header;
        for (std::size_t i = 0; i < s.n_samples; ++i, p += 4) {
            s.samples[t * s.n_samples + i] = format == 1 ? ibm_to_float(be32(p))
                                                         : ieee_to_float(be32(p));
        }
    }
    return s;
}
