// expect: requires cl_khr_fp64
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { double d = y[i]; y[i] = d; }
