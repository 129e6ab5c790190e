// expect: ambiguous
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = max(1, 2.0f); }
