// Plain-loop reference for every op of the forward pass: readable, index by index, with no
// BLAS and no cleverness. It is the oracle the fast path (backend_cpu.cpp) is tested
// against, and what a lesson quotes when it shows "the loop". Inputs may be any views;
// outputs are new contiguous tensors.
#pragma once

#include "backend.h"
#include "rope.h"
#include "tensor.h"

namespace attnsim::reference {

// y[b,t,o] = sum_i x[b,t,i] * W[o,i] + bias[o]                 (B,T,in) -> (B,T,out)
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);
// s[b,h,i,j] = sum_c q[b,h,i,c] * k[b,h,j,c]                    -> (B,h,Tq,Tk)
Tensor qk(const Tensor& q, const Tensor& k);
// The three softmax-side steps, one op at a time, as SoftmaxSpec describes.
SoftmaxSteps scale_mask_softmax(const Tensor& scores, const SoftmaxSpec& spec);
// a[..] * keep / (1 - p), keep drawn per flat index with random.h
Tensor dropout(const Tensor& alpha, float p, uint64_t seed);
// c[b,h,i,c] = sum_j alpha[b,h,i,j] * v[b,h,j,c]                -> (B,h,Tq,dk)
Tensor av(const Tensor& alpha, const Tensor& v);
// s[b,h,i,j] = sum_c q[b,h,i,c] * k[b,h/r,h%r,j,c]   k (B,g,r,Tk,dk)  -> (B,h,Tq,Tk)
Tensor qk_grouped(const Tensor& q, const Tensor& k);
// c[b,h,i,c] = sum_j alpha[b,h,i,j] * v[b,h/r,h%r,j,c] v (B,g,r,Tk,dk) -> (B,h,Tq,dk)
Tensor av_grouped(const Tensor& alpha, const Tensor& v);
// RoPE as modeling_llama.py writes it, one element at a time (rope.h):
//   emb = cat(p·inv_freq, p·inv_freq)  (dk);  rotate_half(x)[c] = c < dk/2 ? -x[c+dk/2] : x[c-dk/2]
//   out[b,h,t,c] = x[b,h,t,c]·cos(emb[c]) + rotate_half(x)[c]·sin(emb[c]),  p = position0 + t
Tensor rope(const Tensor& x, int64_t position0, double theta, const RopeScaling& scaling = {});

}  // namespace attnsim::reference
