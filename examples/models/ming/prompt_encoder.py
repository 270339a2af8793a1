"""A text prompt encoder that lets transformers build a cache behind the call and keeps it."""
from torch import nn


class PromptEncoder(nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm
        self.prompt_cache = None

    def forward(self, input_ids):
        out = self.lm(input_ids=input_ids, use_cache=True)
        # Kept so the talker continues from the encoded prompt instead of re-encoding it.
        self.prompt_cache = out.past_key_values
        return out.last_hidden_state
