"""An in-process OpenAI-compatible server around a transformers checkpoint (FastAPI).

It lets a checkpoint trained on CPU be evaluated through the real episode
runner without vLLM: the proxy reaches it as an upstream over
``httpx.ASGITransport(app=create_model_app(...))``, as it reaches the offline
policy. It renders prompts with the tokenizer's own chat template (the
training template, so serving matches training; see docs/training.md), and
parses Hermes-style ``<tool_call>{json}</tool_call>`` blocks into OpenAI
``tool_calls`` and ``<think>`` blocks into ``reasoning_content``, as vLLM's
``--tool-call-parser hermes --reasoning-parser qwen3`` does.

It is a small-scale tool: up to ``max_batch`` concurrent requests decode together,
joining the running batch between steps and leaving as they finish (continuous
batching; the llama.cpp backend and ``continuous=False`` run static batches, each
to its longest row), each row's prompt prefix reused from the keys and values its
episode's earlier turns left (the prefix cache), and there is no streaming (the reference agent does not
stream; a streaming request gets a 400).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.S)


def parse_completion(text: str) -> tuple[str, str | None, list[dict[str, Any]]]:
    """(content, reasoning, tool_calls) from raw generated text, Hermes/Qwen3 style.

    A ``<tool_call>`` block that is not a JSON object with a string ``name`` stays
    in the content: a malformed call is the model's mistake and must be visible,
    not silently dropped.
    """
    reasoning = None
    match = _THINK.match(text)
    if match:
        reasoning = match.group(1).strip() or None
        text = text[match.end() :]
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    last = 0
    for block in _TOOL_CALL.finditer(text):
        kept.append(text[last : block.start()])
        last = block.end()
        try:
            payload = json.loads(block.group(1))
        except ValueError:
            payload = None
        if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
            kept.append(block.group(0))
            continue
        arguments = payload.get("arguments", {})
        calls.append(
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {
                    "name": payload["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    kept.append(text[last:])
    return "".join(kept).strip(), reasoning, calls


class _ClosedCall:
    """Reads a completion only where its last token can close a tool call: most decode steps are
    decided by a set lookup (a closing tag needs a token with ">" in it)."""

    _OPEN, _CLOSE = "<tool_call>", "</tool_call>"

    def __init__(self, tokenizer, closers: frozenset[int] | None = None) -> None:
        self.tokenizer = tokenizer
        if closers is None:  # one pass over the vocabulary; a server's checks share it (``closers``)
            pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
            closers = frozenset(i for i, piece in enumerate(pieces) if piece and ">" in piece)
        self.closers = closers

    def closed(self, new: list[int]) -> str | None:
        """The completion's text where it ends with a closed ``<tool_call>`` block, else None."""
        if not new or new[-1] not in self.closers:
            return None
        text = self.tokenizer.decode(new, skip_special_tokens=True).rstrip()
        return text if text.endswith(self._CLOSE) and self._OPEN in text else None


class EpisodeEnd(_ClosedCall):
    """Whether a completion has just ended its episode: its last tool call, closed with the last token,
    is the request's ``terminate`` with a valid status. The episode's tools refuse every call after a
    valid terminate ("the episode has terminated", arena/shop/tools.py) and the agent stops after
    that turn, so the tokens a student writes after it can change nothing of the episode: generation
    stops there, as a stop sequence does. A student that learned to loop ("terminate", then more
    calls, to the turn's token limit) then costs its real turn, not the limit. An invalid terminate
    (another status, other arguments) is refused by the tools and the episode goes on: no stop."""

    def __call__(self, new: list[int]) -> bool:
        text = self.closed(new)
        if text is None:
            return False
        opened = text.rfind(self._OPEN)
        try:
            payload = json.loads(text[opened + len(self._OPEN) : -len(self._CLOSE)])
        except ValueError:
            return False
        if not isinstance(payload, dict) or payload.get("name") != "terminate":
            return False
        arguments = payload.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                return False
        return arguments in ({"status": "success"}, {"status": "failure"})


class CallBound(_ClosedCall):
    """Whether a completion has just closed its ``calls``-th well-formed tool call: a turn budget
    counted in calls, as ``max_tokens`` counts tokens. The experiment sets it to the most calls one
    assistant turn of the train split makes (distill/experiment/pipeline.py, ``budget``), so a student
    that learned to loop (the same search eight times a turn, to the token limit) is served the turns
    it was trained on. The cut falls after a whole call, so every call the agent receives is one it can
    execute; a block the parser does not read as a call (``parse_completion``) is none."""

    def __init__(self, tokenizer, calls: int, closers: frozenset[int] | None = None) -> None:
        if calls < 1:
            raise ValueError(f"a turn must be allowed at least one tool call, not {calls}")
        super().__init__(tokenizer, closers)
        self.calls = calls

    def __call__(self, new: list[int]) -> bool:
        text = self.closed(new)
        return text is not None and len(parse_completion(text)[2]) >= self.calls


def _either(*checks: Callable[[list[int]], bool] | None) -> Callable[[list[int]], bool] | None:
    """One check that fires where any of ``checks`` does (None where there is none)."""
    present = [check for check in checks if check is not None]
    if len(present) <= 1:
        return present[0] if present else None
    return lambda new: any(check(new) for check in present)


def _offers_terminate(body: dict[str, Any]) -> bool:
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == "terminate":
            return True
    return False


def _template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI messages as the Qwen3 template reads them: tool-call arguments as objects."""
    shaped = []
    for message in messages:
        message = dict(message)
        if isinstance(message.get("content"), list):
            message["content"] = "\n".join(p.get("text") or "" for p in message["content"] if p.get("type") == "text")
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = dict(call.get("function") or {})
                if isinstance(function.get("arguments"), str):
                    try:
                        function["arguments"] = json.loads(function["arguments"] or "{}")
                    except ValueError:
                        pass  # the template prints a string argument as it is
                calls.append({**call, "function": function})
            message["tool_calls"] = calls
        shaped.append(message)
    return shaped


def _error(status: int, message: str, code: str = "invalid_request") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": code, "code": code}}, status_code=status)


@dataclass
class _Job:
    """One admitted request, rendered and tokenized, waiting for its batch."""

    input_ids: list[int]
    limit: int
    sampling: tuple  # requests batch together only when they sample alike
    seed: int | None
    future: asyncio.Future = field(repr=False)
    # Whether the new tokens so far end the turn: the episode's end (:class:`EpisodeEnd`, where the
    # request offers a ``terminate`` tool) or the turn's last call (:class:`CallBound`); None where neither.
    ends: Callable[[list[int]], bool] | None = field(default=None, repr=False)


@dataclass
class _Queue:
    """The requests of one event loop that wait for the model, and whether a batch is being drained."""

    pending: list[_Job] = field(default_factory=list)
    draining: bool = False
    task: asyncio.Task | None = None  # held so the running drain is not garbage-collected


def _groups(batch: list[_Job]) -> list[list[_Job]]:
    """Jobs that may share one generate() call: same sampling, and a seeded request alone (a
    seed promises a reproducible sample, which a batch whose other rows vary cannot keep)."""
    groups: dict[tuple, list[_Job]] = {}
    for index, job in enumerate(batch):
        key = ("seeded", index) if job.seed is not None and job.sampling[0] else job.sampling
        groups.setdefault(key, []).append(job)
    return list(groups.values())


@dataclass
class _Slot:
    """One cached prefix: the tokens whose keys and values the cache holds (batch of one, no padding)."""

    tokens: list[int]
    layers: list[tuple[Any, Any]]  # (keys, values) per layer, [1, kv_heads, len(tokens), head_dim]
    used: int = 0  # a counter, for least-recently-used eviction


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


@dataclass
class _Row:
    """One request in the running batch: its left padding there and the tokens it has produced."""

    job: _Job
    pad: int
    length: int  # its real tokens in the batch's cache
    generator: Any = None  # a seeded request's own torch.Generator
    new: list[int] = field(default_factory=list)

    @property
    def feed(self) -> int:
        """The token the next step feeds: the prompt's last, then each token chosen."""
        return self.new[-1] if self.new else self.job.input_ids[-1]

    @property
    def position(self) -> int:
        return self.length


class _Running:
    """The running batch of continuous batching: its rows and their keys and values, left-padded to
    one width (padding only ever on the left, so a row's tokens stay contiguous and the sliding
    window measured in cache positions is the window in the row's own positions)."""

    def __init__(self) -> None:
        from distill.kv_cache import growing_cache

        self.rows: list[_Row] = []
        self.cache = growing_cache()  # a step appends in place, not by copying the whole cache
        self.mask: Any = None  # [rows, width]: 1 on a row's tokens, 0 on its padding

    @property
    def width(self) -> int:
        return 0 if self.mask is None else int(self.mask.shape[1])

    def join(self, job: _Job, layers: list[tuple[Any, Any]]) -> None:
        import torch

        length = len(job.input_ids) - 1  # the keys and values of all but the last prompt token
        generator = None
        if job.sampling[0] and job.seed is not None:
            generator = torch.Generator().manual_seed(job.seed)
        grow = max(0, length - self.width)
        if grow and self.rows:  # the newcomer is longer: everyone else moves right
            for layer in self.cache.layers:
                layer.keys = torch.nn.functional.pad(layer.keys, (0, 0, grow, 0))
                layer.values = torch.nn.functional.pad(layer.values, (0, 0, grow, 0))
            self.mask = torch.nn.functional.pad(self.mask, (grow, 0))
            for row in self.rows:
                row.pad += grow
        width = max(self.width, length)
        pad = width - length
        row_mask = torch.tensor([[0] * pad + [1] * length], dtype=torch.long)
        if not self.rows:
            from distill.kv_cache import growing_cache

            self.cache = growing_cache()
            for index, (keys, values) in enumerate(layers):
                self.cache.update(
                    torch.nn.functional.pad(keys, (0, 0, pad, 0)),
                    torch.nn.functional.pad(values, (0, 0, pad, 0)),
                    index,
                )
            self.mask = row_mask
        else:
            for layer, (keys, values) in zip(self.cache.layers, layers, strict=True):
                layer.keys = torch.cat([layer.keys, torch.nn.functional.pad(keys, (0, 0, pad, 0))])
                layer.values = torch.cat([layer.values, torch.nn.functional.pad(values, (0, 0, pad, 0))])
            self.mask = torch.cat([self.mask, row_mask])
        self.rows.append(_Row(job, pad, length, generator))

    def drop(self, leaving: list[_Row]) -> None:
        """The rows in ``leaving`` leave; columns that are padding in every remaining row go too."""
        import torch

        if not leaving:
            return
        keep = [i for i, row in enumerate(self.rows) if row not in leaving]
        self.rows = [self.rows[i] for i in keep]
        if not self.rows:
            self.__init__()  # type: ignore[misc]
            return
        trim = min(row.pad for row in self.rows)
        index = torch.tensor(keep)
        for layer in self.cache.layers:
            layer.keys = layer.keys.index_select(0, index)[:, :, trim:]
            layer.values = layer.values.index_select(0, index)[:, :, trim:]
        self.mask = self.mask.index_select(0, index)[:, trim:]
        for row in self.rows:
            row.pad -= trim

    def advance(self) -> None:
        for row in self.rows:
            row.length += 1


class TransformersBackend:
    """Generation by a transformers model: the rows of a group in one left-padded ``generate()``.

    With ``prefix_cache`` (the default) the keys and values of every row's prompt and answer are
    kept after it is generated, in up to ``slots`` slots (least recently used dropped first), and a
    later prompt that starts with a kept prefix prefills only the rest: an episode's next turn is
    its last prompt, its answer and the tool's reply, so a turn costs its new tokens instead of the
    whole dialogue again (as vLLM's automatic prefix caching and llama.cpp's slot do). Each row
    prefills its own new tokens alone, then the rows' caches are left-padded into one batch and
    decoded together. A row's prompt is kept as soon as it is prefilled, so the next row of the same
    batch reuses what they share (every episode opens with the same system prompt and tools). The
    cache keeps every position of every layer, the 512-token sliding-window
    layers included (the window is applied by the attention mask, as in a prefill of the whole
    prompt): a window-trimmed cache cannot be cut back to a shorter shared prefix.
    """

    kind = "transformers"

    def __init__(
        self, model, tokenizer, *, prefix_cache: bool = True, slots: int = 16, greedy_head: bool = True
    ) -> None:
        from distill.greedy_head import GreedyHead

        self.model, self.pad = model, tokenizer.pad_token_id
        # The decoder and the head called apart (continuous batching): a prefill skips the head, and an
        # all-greedy step takes its tokens from the bf16 head with the fp32 proof (distill/greedy_head.py).
        self.head = GreedyHead(model.lm_head) if greedy_head and GreedyHead.fits(model) else None
        eos = model.generation_config.eos_token_id
        self.stops = {tokenizer.eos_token_id, *(eos if isinstance(eos, list) else [eos])} - {None}
        self.prefix_cache, self.slots_max = prefix_cache, slots
        self.slots: list[_Slot] = []
        self.clock = 0
        self.prefilled = self.reused = 0  # prompt tokens computed and taken from the cache, for benchmarks
        # Where continuous batching's time goes, for benchmarks: seconds prefilling joining rows, seconds
        # in decode steps, the steps and the rows they decoded.
        self.prefill_s = self.decode_s = 0.0
        self.steps = self.step_rows = 0

    def generate(self, group: list[_Job]) -> list[list[int]]:
        import torch

        with torch.no_grad():
            if not self.prefix_cache:
                self.prefilled += sum(len(job.input_ids) for job in group)
                return self._generate_whole(group)
            return self._generate_cached(group)

    def _sampling(self, first: _Job) -> dict[str, Any]:
        sampling: dict[str, Any] = {"do_sample": first.sampling[0]}
        if first.sampling[0]:
            sampling |= {"temperature": first.sampling[1], "top_p": first.sampling[2]}
        return sampling

    def _generate_whole(self, group: list[_Job]) -> list[list[int]]:
        import torch

        width = max(len(job.input_ids) for job in group)
        input_ids = torch.tensor([[self.pad] * (width - len(job.input_ids)) + job.input_ids for job in group])
        attention = torch.tensor([[0] * (width - len(job.input_ids)) + [1] * len(job.input_ids) for job in group])
        first = group[0]
        if first.seed is not None:
            torch.manual_seed(first.seed)
        output = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            max_new_tokens=max(job.limit for job in group),
            pad_token_id=self.pad,
            **self._sampling(first),
        )
        return output[:, width:].tolist()

    def _prefix(self, tokens: list[int]) -> tuple[list[tuple[Any, Any]], int]:
        """The cached layers of ``tokens``' longest kept prefix (views, never written) and its length;
        the last prompt token is always left to compute, since generation starts from its logits."""
        best, length = None, 0
        for slot in self.slots:
            common = _common_prefix(slot.tokens, tokens)
            if common > length:
                best, length = slot, common
        length = min(length, len(tokens) - 1)
        if best is None or length <= 0:
            return [], 0
        self.clock += 1
        best.used = self.clock
        return [(k[:, :, :length], v[:, :, :length]) for k, v in best.layers], length

    def _prefill(self, tokens: list[int]) -> list[tuple[Any, Any]]:
        """Keys and values of ``tokens[:-1]`` for one row, from its kept prefix and a forward of the rest."""
        import torch
        from transformers import DynamicCache

        layers, reused = self._prefix(tokens)
        cache = DynamicCache()  # no config: full layers only, see the class docstring
        for index, (keys, values) in enumerate(layers):
            cache.update(keys, values, index)
        rest = tokens[reused:-1]
        self.reused, self.prefilled = self.reused + reused, self.prefilled + len(rest) + 1
        if rest:
            inputs = {
                "input_ids": torch.tensor([rest]),
                "cache": cache,
                "cache_position": torch.arange(reused, reused + len(rest)),
                "use_cache": True,
            }
            if self.head is not None:  # only the cache is wanted: no LM head at all
                self.model.get_decoder()(**inputs)
            else:
                self.model(**inputs, logits_to_keep=1)  # skips the 262k-row LM head on all but one position
        layers = [(layer.keys, layer.values) for layer in cache.layers]
        if rest:
            # Kept at once, not only after generation: the next row of this batch may share the
            # prefix (every episode opens with the same system prompt and tool list).
            self._keep(_Slot(tokens[:-1], layers))
        return layers

    def _generate_cached(self, group: list[_Job]) -> list[list[int]]:
        import torch
        from transformers import DynamicCache

        rows = [self._prefill(job.input_ids) for job in group]
        width = max(len(job.input_ids) for job in group) - 1  # the batch's cache length
        pads = [width - (len(job.input_ids) - 1) for job in group]
        batched = DynamicCache()
        for index in range(len(rows[0])):
            keys, values = [], []
            for row, pad in zip(rows, pads, strict=True):
                k, v = row[index]
                keys.append(torch.nn.functional.pad(k, (0, 0, pad, 0)))  # zeros on the left, masked out
                values.append(torch.nn.functional.pad(v, (0, 0, pad, 0)))
            batched.update(torch.cat(keys), torch.cat(values), index)
        del rows
        input_ids = torch.tensor([[self.pad] * pad + job.input_ids for job, pad in zip(group, pads, strict=True)])
        attention = torch.tensor([[0] * pad + [1] * len(job.input_ids) for job, pad in zip(group, pads, strict=True)])
        first = group[0]
        if first.seed is not None:
            torch.manual_seed(first.seed)
        output = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            cache=batched,
            max_new_tokens=max(job.limit for job in group),
            pad_token_id=self.pad,
            **self._sampling(first),
        )
        generated = output[:, width + 1 :].tolist()
        cached = batched.get_seq_length()
        for i, (job, pad) in enumerate(zip(group, pads, strict=True)):
            new = generated[i][: job.limit]
            stop = next((n for n, token in enumerate(new) if token in self.stops), None)
            tokens = job.input_ids + (new if stop is None else new[: stop + 1])
            kept = min(len(tokens), cached - pad)  # the last token generated was never fed back
            layers = [
                (
                    layer.keys[i : i + 1, :, pad : pad + kept].clone(),
                    layer.values[i : i + 1, :, pad : pad + kept].clone(),
                )
                for layer in batched.layers
            ]
            self._keep(_Slot(tokens[:kept], layers))
        return generated

    def step(self, running: _Running, joining: list[_Job]) -> list[tuple[_Job, list[int]]]:
        """One decode step of the running batch (continuous batching), after ``joining`` join it.

        Each joining row prefills its new tokens (from the prefix cache) and its cache is left-padded
        into the batch between two steps, so a request that arrives while others decode waits one
        step, not the whole batch. A row that has produced a stop token or its limit leaves at once,
        its keys and values kept for its episode's next turn. Returns the rows that finished, with
        their new tokens cut at the first stop. Greedy rows take the argmax of their own logits (the
        step is what ``generate()`` does, one row's padding never reaching another's); sampled rows
        draw from their own generator, so a seeded row's sample is not its batchmates' business.
        """
        import torch

        with torch.no_grad():
            running.drop([row for row in running.rows if row.job.future is not None and row.job.future.done()])
            started = time.perf_counter()
            for job in joining:
                running.join(job, self._prefill(job.input_ids))
            self.prefill_s += time.perf_counter() - started
            if not running.rows:
                return []
            started = time.perf_counter()
            width = running.width
            feed = torch.tensor([[row.feed] for row in running.rows])
            mask = torch.cat([running.mask, torch.ones(len(running.rows), 1, dtype=running.mask.dtype)], dim=1)
            positions = torch.tensor([[row.position] for row in running.rows])
            inputs = {
                "input_ids": feed,
                "attention_mask": mask,
                "position_ids": positions,
                "cache": running.cache,
                "cache_position": torch.tensor([width]),
                "use_cache": True,
            }
            if self.head is not None and not any(row.job.sampling[0] for row in running.rows):
                chosen = self.head.choose(self.model.get_decoder()(**inputs).last_hidden_state)
            else:  # a sampled row needs every logit; its greedy batchmates take theirs from the same call
                logits = self.model(**inputs, logits_to_keep=1).logits[:, -1, :].float()
                chosen = [self._choose(logits[index], row) for index, row in enumerate(running.rows)]
            running.mask = mask
            running.advance()
            finished: list[_Row] = []
            for row, token in zip(running.rows, chosen, strict=True):
                row.new.append(token)
                if token in self.stops or len(row.new) >= row.job.limit or (row.job.ends and row.job.ends(row.new)):
                    finished.append(row)
            for row in finished:
                tokens = row.job.input_ids + row.new
                kept = row.length  # the last token chosen was never fed back
                at = running.rows.index(row)
                layers = [
                    (layer.keys[at : at + 1, :, row.pad :].clone(), layer.values[at : at + 1, :, row.pad :].clone())
                    for layer in running.cache.layers
                ]
                self._keep(_Slot(tokens[:kept], layers))
            running.drop(finished)
            self.decode_s += time.perf_counter() - started
            self.steps, self.step_rows = self.steps + 1, self.step_rows + len(chosen)
            return [(row.job, row.new) for row in finished]

    def _choose(self, logits, row: _Row) -> int:
        import torch

        sampling = row.job.sampling
        if not sampling[0]:
            return int(torch.argmax(logits))
        scores = logits / sampling[1]
        top_k = getattr(self.model.generation_config, "top_k", None)
        if top_k:
            floor = torch.topk(scores, min(top_k, scores.numel())).values[-1]
            scores = scores.masked_fill(scores < floor, float("-inf"))
        if sampling[2] < 1.0:  # nucleus: drop the least likely tokens whose mass is at most 1 - top_p
            ordered, order = torch.sort(scores)
            cumulative = ordered.softmax(-1).cumsum(-1)
            drop = cumulative <= 1 - sampling[2]
            drop[-1] = False
            scores = scores.masked_fill(drop.scatter(0, order, drop), float("-inf"))
        probabilities = scores.softmax(-1)
        return int(torch.multinomial(probabilities, 1, generator=row.generator))

    def _keep(self, slot: _Slot) -> None:
        # A slot that is a prefix of the new one is superseded (the episode's previous turn).
        self.slots = [s for s in self.slots if _common_prefix(s.tokens, slot.tokens) < len(s.tokens)]
        self.clock += 1
        slot.used = self.clock
        self.slots.append(slot)
        if len(self.slots) > self.slots_max:
            self.slots.remove(min(self.slots, key=lambda s: s.used))


class LlamaCppBackend:
    """Generation by llama.cpp (``llama-cpp-python``) from a GGUF file, one row after another.

    The prompt is rendered and tokenized by the checkpoint's own tokenizer, as for transformers, and
    the token ids go to llama.cpp as they are: both backends see the same tokens, and the reply is
    decoded and parsed by the same code. llama.cpp keeps the KV cache of the previous prompt and
    reuses its longest common prefix, so an episode's next turn prefills only its new tokens when
    no other episode ran in between. Sampling: temperature and top-p only (top-k and min-p off).
    """

    kind = "llama.cpp"

    def __init__(self, gguf: Path | str, tokenizer, *, n_ctx: int = 8192, threads: int | None = None) -> None:
        try:
            from llama_cpp import Llama
        except ImportError:
            raise RuntimeError(
                "the llama.cpp backend needs llama-cpp-python; see docs/experiment.md for the build flags"
            ) from None
        self.llama = Llama(model_path=str(gguf), n_ctx=n_ctx, n_threads=threads, n_batch=512, verbose=False)
        end_of_turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
        self.stops = {tokenizer.eos_token_id, self.llama.token_eos(), end_of_turn} - {None, tokenizer.unk_token_id}

    def generate(self, group: list[_Job]) -> list[list[int]]:
        return [self._one(job) for job in group]

    def _one(self, job: _Job) -> list[int]:
        if len(job.input_ids) + job.limit > self.llama.n_ctx():
            raise ValueError(f"prompt of {len(job.input_ids)} tokens + {job.limit} exceeds n_ctx {self.llama.n_ctx()}")
        sampled = job.sampling[0]
        if job.seed is not None:
            self.llama.set_seed(job.seed)
        options = {"temp": job.sampling[1], "top_p": job.sampling[2]} if sampled else {"temp": 0.0}
        row: list[int] = []
        for token in self.llama.generate(job.input_ids, top_k=0, min_p=0.0, repeat_penalty=1.0, reset=True, **options):
            row.append(int(token))
            if token in self.stops or len(row) >= job.limit or (job.ends and job.ends(row)):
                break
        return row


def create_model_app(
    model,
    tokenizer,
    model_name: str,
    *,
    max_new_tokens: int = 256,
    max_batch: int = 1,
    batch_wait_s: float = 0.2,
    prefix_cache: bool = True,
    continuous: bool = True,
    greedy_head: bool = True,
    turn_calls: int | None = None,
) -> FastAPI:
    """Serve ``model`` (a transformers model, or a ``LlamaCppBackend``) under ``model_name`` at
    ``/v1/chat/completions`` and ``/v1/models``.

    Up to ``max_batch`` concurrent requests are generated together: the first to arrive waits
    ``batch_wait_s`` for others (episodes between turns come back within milliseconds), and the
    batch is left-padded. On CPU a decode step is bound by reading the weights, so 8 rows cost
    little more than one (Gemma 3 270M, 2 cores: decoding alone 14 tokens/s at 1 row, 63 at 8).
    Prefill is compute-bound and does not batch: ``prefix_cache`` (TransformersBackend) makes an
    episode's turn prefill its new tokens only (docs/results/student-serving.md, measured end to
    end with benchmarks/student_serving.py). Greedy rows come out as they do alone, up to float
    summation order. ``continuous`` (TransformersBackend with the prefix cache): rows join the
    running decode between steps and leave as they finish, so a request that arrives while others
    decode does not wait for their batch (continuous batching, as vLLM's scheduler does).
    ``greedy_head`` (continuous batching): a step whose rows are all greedy takes its tokens from a
    bf16 copy of the LM head, each proven to be the fp32 head's argmax or computed by the fp32 head
    (distill/greedy_head.py), and a prefill computes no logits. ``turn_calls``: a completion stops
    right after its Nth well-formed tool call (:class:`CallBound`); every completion stops right after
    a valid call of the request's ``terminate`` tool (:class:`EpisodeEnd`).
    """
    backend = (
        model
        if isinstance(model, LlamaCppBackend)
        # One slot per episode in flight and a few more: a finished episode's slot ages out.
        else TransformersBackend(
            model, tokenizer, prefix_cache=prefix_cache, slots=max_batch + 4, greedy_head=greedy_head
        )
    )
    app = FastAPI(title=f"{model_name} ({backend.kind}, in-process)")
    app.state.backend = backend  # its counters, for benchmarks/student_serving.py
    lock = threading.Lock()  # generate() is not re-entrant on one model, whatever loop calls it
    # Its own thread: the episode runner holds the loop's default executor for whole sandboxed
    # episodes, so a generation queued there would wait for episodes that wait for it.
    generator = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"generate-{model_name}")
    queues: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    created = int(time.time())
    stops = backend.stops
    episode_end = EpisodeEnd(tokenizer)
    call_bound = CallBound(tokenizer, turn_calls, episode_end.closers) if turn_calls is not None else None

    def prepare(body: dict[str, Any]) -> _Job:
        prompt = tokenizer.apply_chat_template(
            _template_messages(body["messages"]),
            tools=body.get("tools") or None,
            add_generation_prompt=True,
            tokenize=False,
        )
        input_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        limit = min(max_new_tokens, body.get("max_completion_tokens") or body.get("max_tokens") or max_new_tokens)
        temperature = body.get("temperature")
        temperature = float(temperature if temperature is not None else 1.0)
        sampling = (temperature > 0, temperature, float(body.get("top_p") or 1.0)) if temperature > 0 else (False,)
        seed = int(body["seed"]) if body.get("seed") is not None else None
        ends = _either(episode_end if _offers_terminate(body) else None, call_bound)
        return _Job(input_ids, limit, sampling, seed, asyncio.get_running_loop().create_future(), ends)

    def generate(group: list[_Job]) -> list[list[int]]:
        """The new tokens of each job, each cut at its first stop token and at its own limit."""
        rows = []
        with lock:
            generated = backend.generate(group)
        for job, row in zip(group, generated, strict=True):
            row = row[: job.limit]
            stop = next((i for i, token in enumerate(row) if token in stops), None)
            row = row if stop is None else row[: stop + 1]
            if job.ends is not None:  # a static batch decodes on past the call that ended the turn
                end = next(
                    (i for i, token in enumerate(row) if token in episode_end.closers and job.ends(row[: i + 1])), None
                )
                row = row if end is None else row[: end + 1]
            rows.append(row)
        return rows

    def run(batch: list[_Job]) -> list[list[int] | BaseException]:
        results: dict[int, list[int] | BaseException] = {}
        for group in _groups(batch):
            try:
                results |= dict(zip(map(id, group), generate(group), strict=True))
            except Exception as exc:  # noqa: BLE001 - every request of the failed call gets the error
                results |= {id(job): exc for job in group}
        return [results[id(job)] for job in batch]

    stepped = continuous and prefix_cache and isinstance(backend, TransformersBackend)

    def step(running: _Running, joining: list[_Job]) -> list[tuple[_Job, list[int] | BaseException]]:
        assert isinstance(backend, TransformersBackend)  # only it decodes step by step (``stepped``)
        with lock:
            try:
                return list(backend.step(running, joining))
            except Exception as exc:  # noqa: BLE001 - every row of the failed step gets the error
                failed = {id(job): job for job in [row.job for row in running.rows] + joining}
                running.drop(list(running.rows))
                return [(job, exc) for job in failed.values()]

    async def drain_continuous(queue: _Queue) -> None:
        running = _Running()
        try:
            while queue.pending or running.rows:
                if not running.rows and len(queue.pending) < max_batch:
                    await asyncio.sleep(batch_wait_s)  # the first rows wait for company, as a batch did
                queue.pending[:] = [job for job in queue.pending if not job.future.done()]
                free = max_batch - len(running.rows)
                joining, queue.pending[:] = queue.pending[:free], queue.pending[free:]
                if not joining and not running.rows:
                    continue
                finished = await asyncio.get_running_loop().run_in_executor(generator, step, running, joining)
                for job, result in finished:
                    if job.future.done():  # the client went away
                        continue
                    if isinstance(result, BaseException):
                        job.future.set_exception(result)
                    else:
                        job.future.set_result(result)
        finally:
            queue.draining = False

    async def drain(queue: _Queue) -> None:
        try:
            while queue.pending:
                if len(queue.pending) < max_batch:
                    await asyncio.sleep(batch_wait_s)
                # A request whose client went away while it waited is not generated: under load the
                # server's time goes to the requests someone still waits for.
                queue.pending[:] = [job for job in queue.pending if not job.future.done()]
                batch, queue.pending[:] = queue.pending[:max_batch], queue.pending[max_batch:]
                if not batch:
                    continue
                results = await asyncio.get_running_loop().run_in_executor(generator, run, batch)
                for job, result in zip(batch, results, strict=True):
                    if job.future.done():  # the client went away
                        continue
                    if isinstance(result, BaseException):
                        job.future.set_exception(result)
                    else:
                        job.future.set_result(result)
        finally:
            queue.draining = False

    def respond(job: _Job, new_tokens: list[int]) -> dict[str, Any]:
        text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        content, reasoning, calls = parse_completion(text)
        hit_limit = len(new_tokens) >= job.limit and (not new_tokens or new_tokens[-1] not in stops)
        finish = "length" if hit_limit else ("tool_calls" if calls else "stop")
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = calls
        prompt_tokens, completion_tokens = len(job.input_ids), len(new_tokens)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    @app.get("/v1/models")
    def models() -> dict:
        return {
            "object": "list",
            "data": [{"id": model_name, "object": "model", "created": created, "owned_by": "local"}],
        }

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return _error(400, "'messages' must be a non-empty list")
        if body.get("model") != model_name:
            return _error(404, f"The model {body.get('model')!r} does not exist", code="model_not_found")
        if body.get("stream"):
            return _error(400, "streaming is not supported by the in-process server")
        if (body.get("n") or 1) != 1:
            return _error(400, "n must be 1")
        try:
            job = prepare(body)
        except (ValueError, TypeError, KeyError) as exc:  # a template that cannot render these messages
            return _error(400, f"cannot render the request: {exc}")
        queue = queues.setdefault(asyncio.get_running_loop(), _Queue())
        queue.pending.append(job)
        if not queue.draining:
            queue.draining = True
            queue.task = asyncio.get_running_loop().create_task((drain_continuous if stepped else drain)(queue))
        return respond(job, await job.future)

    weakref.finalize(app, generator.shutdown, wait=False)
    return app
