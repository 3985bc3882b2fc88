"""Vendors' published dense peaks of known GPUs, printed beside the lab's measured matmul peak.

MFU in the lab is always against the measured peak (docs/CONTRACTS.md); these figures only say how far the
measurement is from the datasheet. Dense figures: the datasheets' tensor-core bf16 numbers "with sparsity"
are twice these. FP32 is the non-tensor-core rate (torch leaves TF32 off for float32 matmuls by default).
TFLOP/s, matched against torch.cuda.get_device_name() by substring, most specific first.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    name: str
    fp32: float  # TFLOP/s, dense
    bf16: float | None  # TFLOP/s, dense tensor core; None where the GPU has no bf16 units
    source: str

    def flops(self, dtype: str) -> float | None:
        tflops = self.fp32 if dtype == "float32" else self.bf16
        return tflops * 1e12 if tflops else None


_H200 = "NVIDIA H200 Tensor Core GPU datasheet (2024): FP32 67, BF16 1,979 with sparsity"
_H100 = "NVIDIA H100 Tensor Core GPU datasheet (2023): SXM FP32 67 / BF16 1,979 sparse; PCIe 51 / 1,513 sparse"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet (2021): FP32 19.5, BF16 312 (624 with sparsity)"
_ADA = "NVIDIA Ada Lovelace architecture whitepaper v1.1 (2023), appendix tables: dense FP16/BF16 with FP32 accumulate"
KNOWN = (
    Published("H200", 67.0, 989.5, _H200),
    Published("H100 PCIe", 51.2, 756.5, _H100),
    Published("H100", 67.0, 989.5, _H100),
    Published("A100", 19.5, 312.0, _A100),
    Published("A10", 31.2, 125.0, "NVIDIA A10 Tensor Core GPU datasheet (2021): FP32 31.2, BF16 250 with sparsity"),
    Published("L40S", 91.6, 362.1, "NVIDIA L40S datasheet (2023): FP32 91.6, BF16 733 with sparsity"),
    Published("L4", 30.3, 121.0, "NVIDIA L4 Tensor Core GPU datasheet (2023): FP32 30.3, BF16 242 with sparsity"),
    Published("RTX 4090", 82.6, 165.2, _ADA),
    Published("RTX 3090", 35.6, 71.0, "NVIDIA Ampere GA102 GPU architecture whitepaper v2 (2021), table 9"),
    Published("V100", 15.7, None, "NVIDIA V100 Tensor Core GPU datasheet (2020): SXM2 FP32 15.7; no bf16 units"),
    Published("T4", 8.1, None, "NVIDIA T4 Tensor Core GPU datasheet (2019): FP32 8.1; no bf16 units"),
)


def published(device_name: str) -> Published | None:
    """The vendor's figures for a device name ("NVIDIA H200", "NVIDIA A100-SXM4-80GB"...); None if unknown."""
    return next((gpu for gpu in KNOWN if gpu.name.lower() in device_name.lower()), None)
