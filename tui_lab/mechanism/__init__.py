"""Mechanistic interpretability on the lab's causal models (GPT-2 and Llama shapes): what a part does.

The hook points themselves live with the model (`tui_lab.model.hooks`); this package builds the tools
people know from TransformerLens on them. Importing it imports torch.

- `cache`: `run_with_cache` (the activations asked for) and `run_with_hooks` (read or replace).
- `lens`: the logit lens (nostalgebraist 2020), final norm and unembedding on every residual point.
- `ablation`: zero and mean ablation of each head's `hook_z`, as a layers x heads table.
- `patching`: activation patching (Meng et al. 2022; Wang et al. 2022) of the stream points and sublayer outputs
  (layers x positions) or each head's z and pattern (layers x heads), with the gap warning.
- `path_patching`: from each earlier head to one receiver head's q, k or v (Wang et al. 2022).
- `gradients`: backward hooks on the hook points; `attribution_patching`: patching's first-order estimate.
- `attribution`: direct logit attribution per head (the lab's and TransformerLens's conventions); Q/K/V-composition
  scores (Elhage et al. 2021).
- `head_detectors`: previous-token, duplicate-token and induction scores per head.
- `lab`: `tui_lab.open(name)` -> a `Lab` (model and tokenizer) with TransformerLens's to_tokens, to_str_tokens,
  run_with_cache; `lab_cache`: its cache's accumulated_resid, decompose_resid, stack_head_results, logit_attrs,
  save and load.
- `heads`: each head's W_Q, W_K, W_V, W_O slices of the fused weights.
- `inside_head`: one query of one head through q·k, the scale, the mask, softmax and Σ p·v, from a pass's points
  (any family: self-, causal and cross-attention).
"""
