"""The judge's knobs: the ``judge`` group of the settings (``ARENA_JUDGE__*`` in the environment,
``[judge]`` in TOML)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class TruncationLimits(BaseModel):
    """What the LLM judge's prompt shows of each item (the rules judge reads everything).
    Stated in the prompt, so the judge knows an unseen tail is not missing evidence."""

    model_config = ConfigDict(extra="forbid")

    reasoning_chars: int = Field(1000, ge=100, description="Characters of model output shown per inference step.")
    tool_result_chars: int = Field(300, ge=50, description="Characters of each tool result shown.")
    arguments_chars: int = Field(300, ge=50, description="Characters of each tool call's arguments shown.")
    prompt_chars: int = Field(
        60_000,
        ge=5_000,
        description="Budget of the whole evidence text (~15k tokens); past it, middle timeline entries are elided "
        "and the prompt says how many.",
    )


class JudgeSettings(BaseModel):
    """The reasoning judge: which one runs, where the LLM judge's server is, how it
    retries and how much it may run at once."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["rules", "openai"] = Field("rules", description="Default judge: the offline rules judge or the LLM.")
    base_url: str = Field(
        "http://127.0.0.1:8000/v1", description="OpenAI-compatible server of the LLM judge (vLLM in production)."
    )
    api_key: SecretStr = Field(SecretStr("EMPTY"), description="Bearer key for the judge server (vLLM: any value).")
    models: list[str] = Field(
        default_factory=lambda: ["Qwen/Qwen3-8B"],
        min_length=1,
        description="Judge models, in fallback order (or the panel's members when panel is on).",
    )
    panel: bool = Field(False, description="Ask every model and take the median level, recording disagreement.")
    panel_quorum: int | None = Field(
        None, ge=1, description="Panel answers needed for a judgment (default: a majority of the models)."
    )
    timeout_s: float = Field(60.0, gt=0, description="Deadline of one judge request, connection to last byte.")
    attempts_per_model: int = Field(3, ge=1, description="Tries on one model before falling back to the next.")
    backoff_s: float = Field(0.5, ge=0, description="First retry pause; doubles per retry, with up to 25% jitter.")
    backoff_max_s: float = Field(8.0, ge=0, description="Longest retry pause.")
    concurrency: int = Field(16, ge=1, description="Judge requests in flight at once.")
    pending_rounds: int = Field(
        2, ge=0, description="Extra passes over episodes left 'judgment pending' before a batch returns."
    )
    pending_pause_s: float = Field(10.0, ge=0, description="Pause before each extra pass over pending episodes.")
    max_tokens: int = Field(400, ge=32, description="Completion cap of one judge reply (level + explanation).")
    explanation_chars: int = Field(800, ge=50, description="Longest explanation accepted (the schema's maxLength).")
    extra_body: dict[str, Any] = Field(
        default_factory=lambda: {"chat_template_kwargs": {"enable_thinking": False}},
        description="Extra request fields for the server; the default turns Qwen3's thinking off. Use {} against "
        "servers that reject unknown fields (OpenAI itself).",
    )
    truncation: TruncationLimits = Field(default_factory=TruncationLimits)

    @model_validator(mode="after")
    def _quorum_fits(self) -> JudgeSettings:
        if self.panel and self.panel_quorum is not None and self.panel_quorum > len(self.models):
            raise ValueError(f"panel_quorum {self.panel_quorum} exceeds the {len(self.models)} panel model(s)")
        return self

    @property
    def quorum(self) -> int:
        return self.panel_quorum or len(self.models) // 2 + 1
