# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/40005
# pattern: output.backward(retain_graph=True) per layer in a loop: out of memory (dup of #4661)
# expect: TM012
import torch
import torch.nn.functional as F

def distill(t_model, s_model, inputs, encoder_layers):
    t_result = t_model(**inputs)
    s_outputs = s_model(**inputs)
    loss = torch.nn.KLDivLoss(reduction="batchmean")
    for i, k in enumerate(encoder_layers):
        output = loss(F.log_softmax(s_outputs[3][i + 1], dim=2), F.softmax(t_result[3][k + 1], dim=2))
        output.backward(retain_graph=True)
