// expect: no member named .mem_shared.
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { threadgroup_barrier(mem_flags::mem_shared); y[i] = 0.0f; }
