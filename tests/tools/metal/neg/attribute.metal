// expect: is not a Metal attribute
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grd]]) { y[i] = 0.0f; }
