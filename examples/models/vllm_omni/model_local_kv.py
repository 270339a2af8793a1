"""The engine-side protocol for model-local KV (a small copy for the examples)."""
import enum
from dataclasses import dataclass
from typing import Optional


class ModelLocalKVScope(enum.Enum):
    INVOCATION = "invocation"
    REQUEST = "request"
    SESSION = "session"
    MODEL = "model"


class RowDriver(enum.Enum):
    FIXED = "fixed"
    MAX_NUM_SEQS = "max_num_seqs"


@dataclass(frozen=True)
class ModelLocalKVSpec:
    name: str
    layers: int
    kv_heads: int
    head_dim: int
    dtype: object
    physical_capacity_positions: int
    capacity_source: str
    scope: ModelLocalKVScope
    rows: RowDriver
    rows_fixed: int = 1
    rows_reason: str = ""
    allocation_note: Optional[str] = None


def spec_from_hf_config(config, *, name, physical_capacity_positions, capacity_source, scope,
                        dtype, rows, rows_fixed=1, rows_reason="", allocation_note=None,
                        layers=None, kv_heads=None, head_dim=None):
    layers = layers if layers is not None else config.num_hidden_layers
    kv_heads = kv_heads if kv_heads is not None else config.num_key_value_heads
    head_dim = head_dim if head_dim is not None else config.hidden_size // config.num_attention_heads
    return ModelLocalKVSpec(name, layers, kv_heads, head_dim, dtype, physical_capacity_positions,
                            capacity_source, scope, rows, rows_fixed, rows_reason, allocation_note)


def collect_model_local_kv_specs(model):
    model = model.unwrap() if hasattr(model, "unwrap") else model
    specs = []
    for _, module in model.named_modules():
        declare = getattr(module, "model_local_kv_specs", None)
        if declare is not None:
            specs.extend(declare())
    return specs
