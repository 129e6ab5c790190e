// expect: different sizes
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = as_type<uint>(half(1.0h)); }
