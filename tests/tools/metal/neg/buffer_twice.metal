// expect: two parameters take \[\[buffer\(1\)\]\]
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* x [[buffer(1)]],
              device float* y [[buffer(1)]], uint i [[thread_position_in_grid]]) { y[i] = x[i]; }
