"""What the lab measures on the person's own device: decoding with and without the KV cache (`kv_speed`),
MHA vs GQA vs MQA (`gqa_speed`), each timed by `timer.StepTimer` through the one decoding loop
(`tui_lab.generation.loop.Generation`). The app's Speed view, `tui-lab bench` and `benchmarks/` run these.
"""
