// expect: void return type
#include <metal_stdlib>
using namespace metal;
kernel float k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { return y[i]; }
