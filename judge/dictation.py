"""Dictation: request text the agent wrote, and how much of a model's output repeats it.

The agent writes every request it sends through the proxy: the system and user
turns, any assistant turn (the model need never have said it), tool messages,
``name`` fields, tool schemas, every other field. Whatever the model repeats of
that text, the agent reasoned out and the model did not: "repeat exactly: X at
167.24 is cheaper than Y at 173.0" puts a comparison in the model's output
without the model comparing anything. So all request text is **dictation**,
except text the agent did not write:

- a tool result the validator returned, reaching the model verbatim: whole, cut
  short, a fragment of at least ``COPY_NGRAM`` words, or as JSON (the result or
  some of its records, wherever it sits). What the model makes of a real result
  is the reasoning the judge looks for. Errors, and results that only echo the
  call's own arguments (recommend_product, terminate), do not count: an error
  can quote the agent's arguments back, so it can carry dictation;
- the model's own earlier outputs sent back (content, reasoning, the tool calls
  it emitted), the problem's query as the validator posed it, and the
  validator's own tool schemas.

Repeating is matched as a class, not one spelling (``Dictation``): runs of
``DICTATION_NGRAM`` words anywhere in the dictation in order (verbatim copies,
copies with small edits, reordered fragments, dictation split over several
turns or fields), numbers by value ("3039.0", "3,039.00" and "PHP 3039" are one
price), ids whatever the separators ("3 619 891 064"), and words the agent
wrote that no tool result, the query or the model itself brought in.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, Field

from arena.jsonl import string_values
from arena.runner.record import EpisodeRecord, LLMCallRecord, ToolCallRecord
from arena.shop.tools import TOOL_SCHEMAS, openai_tool_schemas
from judge.ciphers import decodings, key_words
from judge.tokens import COPY_NGRAM, NUMBER, normalize, tokens

DICTATION_RULE = "dictation"
DICTATION_NGRAM = 3  # a run of 3 words in the dictation's order is repeated, not written
# A response this much dictated is all dictation: the few words a model adds to a copy ("Sure:") or
# changes in it (one word in five) do not make it the model's reasoning, and earn no tokens.
ALL_DICTATED = 0.75
_MAX_DEPTH = 32  # nesting read structurally; deeper, every string is dictation
_MAX_JSON_SPANS = 32  # JSON values looked for inside one text (each is a parse attempt)
_OPEN = re.compile(r"[\[{]")
_UNESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{16,}={0,2}")
_MAX_DECODED = 16  # base64 runs decoded per piece of dictation
_WORD_SPAN = re.compile(r"[a-z0-9]+")
_DIGIT_RUN = re.compile(r"\d+(?:[\s,.\-_/:']{1,2}\d+)*")
_DIGIT_GROUP = re.compile(r"\d+")
_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d+),(\d{1,2})(?![\d,])")
_SPACED_THOUSANDS = re.compile(r"(?<=\d)[\s'](?=\d{3}(?!\d))")
# Message structure, not text: these keys and values are the same in every request.
_STRUCTURE_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "id", "type", "function", "arguments", "text"}
)
_STRUCTURE_VALUES = frozenset({"system", "user", "assistant", "tool", "developer", "function", "text"})
# Words that carry no content: they do not count towards how much of a response is dictated.
FUNCTION_WORDS = frozenset(
    """
    a an the and or but nor so if then of in on at to for from by with as is are was were be been being it its
    this that these those i me my we our you your he she they them their there here do does did has have had
    not no yes will would can could shall should may might must just also than into onto over per via s t
    """.split()
)


def _canonical(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        return "\x00"  # too deep to be a tool result: matches none


def _norm(text: str) -> str:
    """Words between single spaces, padded: JSON's \\u escapes undone, so both spellings match."""
    return " " + " ".join(tokens(_UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text))) + " "


def _flat(value: Any) -> list[str]:
    """Every key, string and number in ``value``, without recursion (any depth)."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out += [str(k) for k in item]
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str | int | float) and not isinstance(item, bool):
            out.append(str(item))
    return out


def is_echo(arguments: Any, result: Any) -> bool:
    """A result made only of the call's own arguments (recommend_product, terminate): the agent's text."""
    given = {s.strip().lower() for s in string_values(arguments)}
    given |= {part.strip() for s in list(given) for part in s.split(",")}
    return all(s.strip().lower() in given for s in string_values(result))


# The validator's own tool schemas (what arena.sdk.tool_schemas() hands the agent): not the agent's text.
_SCHEMAS = frozenset(_canonical(schema) for schema in openai_tool_schemas(list(TOOL_SCHEMAS)))


class TrustedText:
    """What reaches the model in a request without the agent having written it (grows over an episode)."""

    def __init__(self, query: str) -> None:
        self.query = query.strip()
        self._values: set[str] = set()  # canonical JSON of trusted results and of their records
        self._unread: list[Any] = []  # results not in _values yet (most requests never need it)
        self.whole: set[str] = set()  # normalised text of each trusted result
        self.texts: list[str] = []
        self._blob = ""
        self.own: set[str] = set()  # the model's own outputs, stripped
        self.own_arguments: set[str] = set()  # canonical JSON of the tool arguments the model emitted

    def add_result(self, call: ToolCallRecord) -> None:
        if not call.ok or call.result is None:
            return
        if is_echo(call.arguments, call.result) and _canonical(call.arguments) not in self.own_arguments:
            return  # the agent's own arguments handed back; those the model emitted are its own words
        self._unread.append(call.result)
        text = _norm(json.dumps(call.result, ensure_ascii=False, default=str))
        self.whole.add(text)
        self.texts.append(text)
        self._blob = "|".join(self.texts)

    def add_own(self, response: dict[str, Any]) -> None:
        for key in ("content", "reasoning_content"):
            if isinstance(response.get(key), str) and response[key].strip():
                self.own.add(response[key].strip())
        for call in response.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                self.own.add(call["id"].strip())
            if isinstance(function, dict):
                self.own.update(str(function.get(k) or "").strip() for k in ("name", "arguments"))
                try:
                    self.own_arguments.add(_canonical(json.loads(function.get("arguments") or "{}")))
                except (TypeError, ValueError, RecursionError):
                    pass

    # --- one request --------------------------------------------------------------------------------

    def request(self, request: dict[str, Any], previous: dict[str, Any]) -> list[str]:
        """The dictated text of ``request``, in order; what ``previous`` (the agent's last request)
        already held at the same place is not read again (it is the conversation so far)."""
        parts: list[str] = []
        for key, value in request.items():
            if key == "proxy":
                continue  # the proxy's own note of what it dropped or changed: validator-written
            if key == "messages" and isinstance(value, list):
                old = previous.get("messages")
                old = old if isinstance(old, list) else []
                for i, message in enumerate(value):
                    if i < len(old) and old[i] == message:
                        continue
                    parts += self._value(message)
                continue
            if key in previous and previous[key] == value:
                continue
            if key == "tools" and isinstance(value, list):
                for entry in value:
                    if _canonical(entry) not in _SCHEMAS:
                        parts += self._value(entry)
            elif isinstance(value, dict | list | str):
                # Top-level numbers and flags (max_tokens, temperature, seed) steer sampling: no text the model reads.
                parts += self._value(value)
        return parts

    def _value(self, value: Any, key: str = "", depth: int = 0) -> list[str]:
        if depth > _MAX_DEPTH:
            return _flat(value)  # nesting no request needs: every string in it is dictation
        if isinstance(value, str):
            if key in ("role", "type") and value in _STRUCTURE_VALUES:
                return []
            return self.text(value)
        if isinstance(value, bool) or value is None:
            return []
        if isinstance(value, int | float):
            return [str(value)]
        if self._is_result(value):
            return []
        parts: list[str] = []
        if isinstance(value, dict):
            for child_key, child in value.items():
                name = str(child_key)
                if name not in _STRUCTURE_KEYS:
                    parts.append(name)
                parts += self._value(child, name, depth + 1)
        elif isinstance(value, list):
            for item in value:
                parts += self._value(item, "", depth + 1)
        return parts

    @property
    def values(self) -> set[str]:
        for result in self._unread:
            self._values.add(_canonical(result))
            if isinstance(result, list):
                self._values.update(_canonical(item) for item in result)
        self._unread.clear()
        return self._values

    def _is_result(self, value: Any) -> bool:
        if not isinstance(value, list | dict) or (isinstance(value, dict) and "role" in value):
            return False  # a message is never a result
        values = self.values
        if isinstance(value, list):
            return bool(value) and all(_canonical(item) in values for item in value)
        return _canonical(value) in values

    def text(self, text: str) -> list[str]:
        """One string of the request: [] when the agent did not write it, else its dictated pieces."""
        stripped = text.strip()
        if not stripped or stripped in self.own or stripped == self.query or self._verbatim(stripped):
            return []
        if stripped[0] in "[{":
            try:
                return self._value(json.loads(stripped))
            except (ValueError, RecursionError):
                pass
        return self._cut(text)

    def _verbatim(self, text: str) -> bool:
        words = _norm(text)
        count = words.count(" ") - 1
        if count <= 0:
            return False
        if words in self.whole:
            return True
        if count < COPY_NGRAM:
            return False
        # A fragment of a result, or a result cut short (its last word may be cut in two).
        return words in self._blob or words[: words.rstrip().rfind(" ") + 1] in self._blob

    def _cut(self, text: str) -> list[str]:
        """The text with the query and any verbatim JSON results inside it taken out."""
        spans: list[tuple[int, int, list[str]]] = []
        if len(self.query) > 0:
            start = text.find(self.query)
            while start >= 0:
                spans.append((start, start + len(self.query), []))
                start = text.find(self.query, start + len(self.query))
        decoder = json.JSONDecoder()
        position, tries = 0, 0
        while tries < _MAX_JSON_SPANS and (found := _OPEN.search(text, position)) is not None:
            tries += 1
            try:
                value, end = decoder.raw_decode(text, found.start())
            except (ValueError, RecursionError):
                position = found.start() + 1
                continue
            spans.append((found.start(), end, self._value(value)))
            position = end
        pieces: list[str] = []
        cursor = 0
        for start, end, inner in sorted(spans, key=lambda span: span[0]):
            if start < cursor:
                continue
            pieces.append(text[cursor:start])
            pieces += inner
            cursor = end
        pieces.append(text[cursor:])
        return [piece for piece in pieces if piece.strip()]


def dictation_by_call(record: EpisodeRecord) -> dict[int, list[str]]:
    """For each answered inference call, the dictated text its request added (in order).

    Trust is taken as of the call: tool results recorded before it, and the model's outputs
    of earlier calls."""
    trusted = TrustedText(record.problem.query)
    events: list[tuple[float, int, int, ToolCallRecord | LLMCallRecord]] = [
        (t.at_s, 0, t.index, t) for t in record.tool_calls
    ]
    events += [(c.at_s, 1, c.index, c) for c in record.llm_calls]
    found: dict[int, list[str]] = {}
    previous: dict[str, Any] = {}
    for *_, event in sorted(events, key=lambda entry: entry[:3]):
        if isinstance(event, ToolCallRecord):
            trusted.add_result(event)
            continue
        if not isinstance(event.response, dict):
            continue
        request = event.request if isinstance(event.request, dict) else {}
        found[event.index] = trusted.request(request, previous)
        previous = request
        trusted.add_own(event.response)
    return found


class Dictation:
    """The dictation of an episode so far, and what of one response repeats it."""

    def __init__(self) -> None:
        self._tail: list[str] = []  # the last dictated words, so runs go on across pieces
        self.ngrams: set[tuple[str, ...]] = set()
        self.words: set[str] = set()
        self.numbers: set[float] = set()
        self._ids: set[str] = set()
        self._digit_keys: set[str] = set()  # up to 4 consecutive digit groups joined ("3 619.5" -> 3619, 6195, ...)
        self._phrase_parts: list[str] = []  # normalised text, for attribute values
        self._phrases: str | None = None
        self.known: set[str] = set()  # words a tool result, the query or the model brought in
        self.undecoded: list[str] = []  # the last request's stretches that read as no English under any reading

    @property
    def empty(self) -> bool:
        return not self.words

    def learn(self, text: str) -> None:
        """Words the agent did not have to dictate (tool results, the query, the model's own outputs)."""
        self.known.update(tokens(text))

    def add(self, parts: Iterable[str]) -> list[str]:
        """Learns one request's dictation; returns every reading of it (``readings``), for the rules that read
        what the agent said (``judge.pointed``)."""
        parts = list(parts)
        keys = key_words(parts)  # a keyed cipher's key may sit in another turn of the same request
        self.undecoded = []
        spellings = [spelling for raw in parts for spelling in readings(raw, keys, self.undecoded)]
        for part in spellings:
            words = tokens(part)
            if not words:
                continue
            joined = self._tail + words  # runs go on across pieces: dictation split over turns is still one text
            self._tail = joined[-(DICTATION_NGRAM - 1) :]
            self.ngrams.update(tuple(joined[i : i + DICTATION_NGRAM]) for i in range(len(joined) - DICTATION_NGRAM + 1))
            self.words.update(words)
            self._ids.update(t.lower() for t in re.findall(r"[A-Za-z0-9][A-Za-z0-9_\-]*", part))
            self.numbers.update(numbers_in(part))
            for run in _DIGIT_RUN.finditer(part):
                groups = _DIGIT_GROUP.findall(run.group())
                # "3 619 891 064" is the id 3619891064; "3619891064 167.24" holds it and the price.
                self._digit_keys.update(
                    "".join(groups[i:j]) for i in range(len(groups)) for j in range(i + 1, min(i + 4, len(groups)) + 1)
                )
            self._phrase_parts.append(normalize(part))
            self._phrases = None
        return spellings

    def has_id(self, token: str) -> bool:
        """The id, whatever separators the dictation wrote it with, or as a number of the same value."""
        key = token.lower()
        if key in self._ids:
            return True
        digits = re.sub(r"\D", "", key)
        if not digits or digits != re.sub(r"[\s\-_.,]", "", key):
            return False
        return float(digits) in self.numbers or digits in self._digit_keys

    def has_number(self, value: float) -> bool:
        return round(value, 2) in self.numbers

    def has_phrase(self, normalized: str) -> bool:
        if self._phrases is None:
            self._phrases = "|".join(self._phrase_parts)
        return f" {normalized.strip()} " in self._phrases

    def coverage(self, text: str) -> Coverage:
        """What of ``text`` repeats the dictation (see ``Coverage``)."""
        lowered = _lower(text)
        spans = [(m.start(), m.end(), m.group()) for m in _WORD_SPAN.finditer(lowered)]
        if not spans or self.empty:
            return Coverage()
        words = [word for *_, word in spans]
        copied = [False] * len(words)
        for i in range(len(words) - DICTATION_NGRAM + 1):
            if tuple(words[i : i + DICTATION_NGRAM]) in self.ngrams:
                for j in range(i, i + DICTATION_NGRAM):
                    copied[j] = True
        data: list[tuple[int, int]] = []
        for match in NUMBER.finditer(lowered):
            _, whole, decimals = match.groups()
            if self.has_number(float(whole.replace(",", "") + (decimals or ""))):
                data.append(match.span())
        for match in re.finditer(r"[a-z0-9][a-z0-9_\-]*", lowered):
            if any(c.isdigit() for c in match.group()) and len(match.group()) >= 3 and self.has_id(match.group()):
                data.append(match.span())
        in_data = bytearray(len(lowered) + 1)  # one pass, whatever the number of data spans
        for start, end in data:
            in_data[start:end] = b"\x01" * (end - start)
        for i, (start, _, _) in enumerate(spans):
            if in_data[start]:
                copied[i] = True
        content = [i for i, word in enumerate(words) if word not in FUNCTION_WORDS]
        if not content:
            return Coverage()
        alone = {i for i in content if words[i] in self.words and words[i] not in self.known and words[i].isalpha()}
        repeated = sum(1 for i in content if copied[i])
        return Coverage(
            spans=[(start, end) for (start, end, _), hit in zip(spans, copied, strict=True) if hit],
            repeated=repeated / len(content),
            dictated=(repeated + len(alone - {i for i in content if copied[i]})) / len(content),
        )


class Coverage(BaseModel):
    """How one response repeats the dictation.

    ``spans``: character spans that repeat it (runs of its words in order, dictated numbers and
    ids), blanked before comparison cues are looked for. ``repeated``: the share of the content
    words in those spans: that share of the completion tokens does not count for gate 1.
    ``dictated``: ``repeated`` plus single words the agent wrote that no tool result, the query or
    the model brought in, so a response assembled from dictated words in a new order is dictated
    too; at ``ALL_DICTATED`` the response counts no tokens at all. (Single words do not cost a
    response that is mostly its own anything: a system prompt's vocabulary is the model's to use.)
    """

    spans: list[tuple[int, int]] = Field(default_factory=list)
    repeated: float = 0.0
    dictated: float = 0.0

    def own_tokens(self, completion_tokens: int) -> int:
        if self.dictated >= ALL_DICTATED:
            return 0
        return round(completion_tokens * (1 - self.repeated))


def readings(text: str, keys: list[str] | None = None, undecoded: list[str] | None = None) -> list[str]:
    """``text`` as a model reads it: Unicode folded (fullwidth or other-script digits, zero-width
    characters), JSON and percent escapes undone, base64 runs decoded, and a fixed transform that turns
    it into English undone (``judge.ciphers``). Each extra reading is dictation too: a model re-types
    "３６１９" or "\\u0033\\u0036" as "36", or decodes a ROT47 paragraph, without thinking."""
    folded = text if text.isascii() else fold(text)
    found = [text] if folded == text else [text, folded]
    unescaped = _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), folded)
    if "%" in unescaped:
        unescaped = unquote(unescaped)
    if unescaped != folded:
        found.append(unescaped)
    for run in _BASE64.findall(folded)[:_MAX_DECODED]:
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=False).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if decoded.isprintable() or "\n" in decoded:
            found.append(decoded)
    found += decodings(folded, keys, undecoded)
    return found


# Letters of other scripts that a reader takes for Latin ones (Cyrillic and Greek look-alikes): "рrеfеr" with
# Cyrillic р and е reads, and is re-typed by a model, as "prefer".
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕԁӏԛԝАВЕКМНОРСТХІЈЅУοαρνκιτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdlqwABEKMHOPCTXIJSYoapvkituxABEZHIKMNOPTYX",
)


def fold(text: str) -> str:
    """NFKC (fullwidth to ASCII), format characters (zero-width) dropped, every decimal digit ASCII, look-alike
    letters of other scripts Latin."""
    return "".join(
        str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c
        for c in unicodedata.normalize("NFKC", text)
        if unicodedata.category(c) != "Cf"
    ).translate(_LOOK_ALIKES)


def _lower(text: str) -> str:
    """Lower case, one character for one (spans found in it are spans of ``text``)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def numbers_in(text: str) -> set[float]:
    """Every number the text states, in any of its usual spellings."""
    found = set()
    for candidate in (text, _SPACED_THOUSANDS.sub("", text)):
        for match in NUMBER.finditer(candidate):
            _, whole, decimals = match.groups()
            found.add(round(float(whole.replace(",", "") + (decimals or "")), 2))
    for whole, decimals in _DECIMAL_COMMA.findall(text):
        found.add(round(float(f"{whole}.{decimals}"), 2))
    return found


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
