// Causal multi-head self-attention on the fused q,k,v projection, as GPT-2 and
// torch.nn.functional.scaled_dot_product_attention(is_causal=True) compute it:
//   qkv [B, T, 3C] holds q | k | v; head h uses channels [h*hs, (h+1)*hs) of each, hs = C / NH;
//   att [B, NH, T, T] = softmax(q k^T / sqrt(hs)) over keys t2 <= t (entries t2 > t are 0);
//   out [B, T, C]: head h's att @ v in channels [h*hs, (h+1)*hs).
#pragma once

namespace gpudirect::train::cpu {

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, int threads);
// Adds into dqkv. att is the forward's probabilities; scratch holds T x T floats (allocated once by
// the caller: a fresh buffer per call costs page faults).
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B, int T, int C, int NH,
                        int threads);

}  // namespace gpudirect::train::cpu
