// expect: as many components
#include <metal_stdlib>
using namespace metal;
kernel void k(device float4* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = float4(1.0f, 2.0f, 3.0f); }
