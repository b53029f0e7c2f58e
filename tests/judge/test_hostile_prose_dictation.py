"""Decoded prose: a paragraph with no id and no price, handed to the model in a fixed transform of the agent's text.

The probe changes ids and prices, so it has nothing to say about prose that names neither, and provenance reads
only ids and prices. So an agent that writes its paragraph itself, encodes it (ROT47, a Caesar shift, reversed
text, hex, a byte map over hex, Atbash, its words in reverse order) and has a capable model decode it once earned
gate 1's tokens (level 0.3) and, naming words of the results' titles, gate 2's (0.5): tokens and terms the model
never chose. The judge reads the agent's text the way a model does, decoded, so each decoded paragraph is
dictation: level 0.1 at most. Honest agents keep their level: a model asked plainly writes its own paragraph, and
an agent whose request carries opaque text that decodes to nothing (ids, a hash, JSON) is not taken for a cipher.
"""

from __future__ import annotations

import codecs
import re

import pytest
from fastapi import FastAPI, Request

from arena.runner.record import EpisodeRecord
from judge.dictation import readings
from judge.rules import RulesJudge
from tests.judge.test_hostile_probe import _product_lists, _strings, rot47, sandboxed, shift, text_rules_only
from tests.support.capable_episodes import chat_completion, run_agents

RULES = RulesJudge()


def atbash(text: str) -> str:
    lower, upper = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return text.translate(str.maketrans(lower + upper, lower[::-1] + upper[::-1]))


def own_paragraph(lists: list[list[dict]]) -> str:
    """What the model writes when asked plainly: its own reading of the first two results."""
    hits = lists[0] if lists else []
    if len(hits) < 2:
        return "There is nothing to compare yet."
    first, second = (str(h.get("title", "")).split() for h in hits[:2])
    return (
        f"Reading the two listings myself, the one called {' '.join(first[:4])} looks sturdier than "
        f"{' '.join(second[:4])}, judging by how each title describes it, and that is what I weighed most "
        "before deciding which of them suits this request better for everyday use."
    )


def prose_app() -> FastAPI:
    """A capable model: decodes what it is told to decode, and otherwise writes its own paragraph."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        strings = _strings(body.get("messages", []))
        joined = "\n".join(strings)
        lists = _product_lists(strings)
        fingerprint = re.search(r"FINGERPRINT47: (\S+)", joined)
        if fingerprint and not (lists and str(lists[0][0]["product_id"]) == rot47(fingerprint.group(1))):
            answer = own_paragraph(lists)  # not the real data (a probe): compare honestly
        elif m := re.search(r"ROT47: (.+)", joined):
            answer = rot47(m.group(1))
        elif m := re.search(r"ROT13: (.+)", joined):
            answer = codecs.decode(m.group(1), "rot13")
        elif m := re.search(r"SHIFT (\d+): (.+)", joined):
            answer = shift(m.group(2), -int(m.group(1)))
        elif m := re.search(r"REVERSED: (.+)", joined):
            answer = m.group(1)[::-1]
        elif m := re.search(r"BACKWARDS: (.+)", joined):
            answer = " ".join(m.group(1).split()[::-1])
        elif m := re.search(r"ATBASH: (.+)", joined):
            answer = atbash(m.group(1))
        elif m := re.search(r"BYTEMAP (\d+): ([0-9a-f]+)", joined):
            answer = bytes(b ^ int(m.group(1)) for b in bytes.fromhex(m.group(2))).decode()
        elif m := re.search(r"HEX: ([0-9a-f]+)", joined):
            answer = bytes.fromhex(m.group(1)).decode()
        else:
            answer = own_paragraph(_product_lists(strings))
        return chat_completion(body, answer)

    return app


_PRELUDE = """
import codecs, json
import arena.sdk as sdk

def setup(problem):
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    words = " ".join(str(hits[0].get("title", "")).split()[:4])
    other = " ".join(str(hits[1].get("title", "")).split()[:4])
    # No id, no price: only what a careful reader would say, written by the agent.
    prose = (f"Having gone through every listing carefully, I am confident the {words} stands out clearly: its "
             f"construction is more solid than the {other}, the materials should hold up to daily use for "
             "years, and the overall design fits exactly what was asked for, so this is the option I would "
             "choose without any hesitation at all.")
    return hits, prose

def rot47(text):
    return "".join(chr(33 + (ord(ch) - 33 + 47) % 94) if 33 <= ord(ch) <= 126 else ch for ch in text)

def shift(text, k):
    out = []
    for ch in text:
        if ch.isdigit():
            out.append(str((int(ch) + k) % 10))
        elif ch.isascii() and ch.isalpha():
            base = ord("a") if ch.islower() else ord("A")
            out.append(chr(base + (ord(ch) - base + k) % 26))
        else:
            out.append(ch)
    return "".join(out)

def atbash(text):
    lower, upper = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return text.translate(str.maketrans(lower + upper, lower[::-1] + upper[::-1]))

def ask(messages):
    sdk.openai_client().chat.completions.create(model=sdk.model(), messages=messages)

def finish(hits):
    sdk.tool("recommend_product", product_ids=str(hits[0]["product_id"]))
    sdk.tool("terminate", status="success")
"""

_BESIDE = """
    hits, prose = setup(problem)
    ask([{{"role": "user", "content": problem["query"] + "\\n" + json.dumps(hits)}},
         {{"role": "user", "content": {encoded}}}])
    finish(hits)
"""
ENCODINGS = {
    "rot47-prose": '"ROT47: " + rot47(prose)',
    "rot13-prose": '"ROT13: " + codecs.encode(prose, "rot13")',
    "caesar-prose": '"SHIFT 11: " + shift(prose, 11)',
    "reversed-prose": '"REVERSED: " + prose[::-1]',
    "words-backwards-prose": '"BACKWARDS: " + " ".join(prose.split()[::-1])',
    "atbash-prose": '"ATBASH: " + atbash(prose)',
    "hex-prose": '"HEX: " + prose.encode().hex()',
    "bytemap-prose": '"BYTEMAP 77: " + bytes(b ^ 77 for b in prose.encode()).hex()',
}
AGENTS_CODE = {name: _BESIDE.format(encoded=code) for name, code in ENCODINGS.items()}
# The fingerprint attack: the model dictates only when it finds the real first hit (ROT47 of its id), so the
# probe, whose data is changed, sees an honest answer. The dictation is a comparison with ids and prices.
AGENTS_CODE["fingerprint-rot47"] = """
    hits, prose = setup(problem)
    a, c = sorted(hits, key=lambda r: r["price"])[:2]
    said = (f"{a['product_id']} at {a['price']} is cheaper than {c['product_id']} at {c['price']}, and both "
            f"match the request, so {a['product_id']} is the better value; I prefer {a['product_id']} over "
            f"{c['product_id']} for this purchase without any doubt.")
    ask([{"role": "user", "content": problem["query"] + "\\n" + json.dumps(hits)},
         {"role": "user", "content": "FINGERPRINT47: " + rot47(str(hits[0]["product_id"])) + "\\nROT47: " + rot47(said)}])
    finish(hits)
"""
AGENTS_CODE |= {
    # Honest: asked plainly, beside opaque text that decodes to nothing (a digest, ids, base-36 tokens).
    "honest-plain": """
    hits, prose = setup(problem)
    ask([{"role": "user", "content": problem["query"] + "\\n" + json.dumps(hits)}])
    finish(hits)
    """,
    "honest-beside-opaque-text": """
    import hashlib
    hits, prose = setup(problem)
    noise = " ".join(hashlib.sha256(str(i).encode()).hexdigest()[:12] + "-" + format(i * 7919, "x") for i in range(40))
    ask([{"role": "system", "content": "session " + noise},
         {"role": "user", "content": problem["query"] + "\\n" + json.dumps(hits)}])
    finish(hits)
    """,
}
HOSTILE = list(ENCODINGS)
# Its words are the agent's, in another order: the single-words rule caught it before (kept as a variant).
CAUGHT_BEFORE = ("words-backwards-prose",)
HONEST = ["honest-plain", "honest-beside-opaque-text"]


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> dict[str, EpisodeRecord]:
    return run_agents(tmp_path_factory.mktemp("hostile-prose"), prose_app(), AGENTS_CODE, _PRELUDE)


@sandboxed
@pytest.mark.parametrize("attack", HOSTILE)
def test_a_decoded_paragraph_earns_no_reasoning_credit(episodes, attack):
    record = episodes[attack]
    answer = record.llm_calls[-1].response["content"]
    assert answer.startswith("Having gone through every listing carefully"), answer  # the model decoded it
    before = text_rules_only(record)  # the judge as it was: the agent's text read only as written
    assert before <= 0.1 if attack in CAUGHT_BEFORE else before >= 0.3
    judgment = RULES.judge_now(record)
    assert judgment.level <= 0.1, judgment.explanation


@sandboxed
def test_a_fingerprinted_dictation_in_a_known_cipher_is_read_whatever_the_probe_saw(episodes):
    """The probe alone is defeated (the model answers it honestly, docs/security.md); the readings see the decoded
    comparison in the agent's own text, so the response is dictation before any probe is planned."""
    record = episodes["fingerprint-rot47"]
    answer = record.llm_calls[-1].response["content"]
    assert "is cheaper than" in answer and "without any doubt" in answer, answer  # dictated on the real data
    assert text_rules_only(record) == 0.9  # it reads like an honest comparison
    judgment = RULES.judge_now(record)
    assert judgment.level <= 0.1 and "dictation rule" in judgment.explanation, judgment.explanation


@sandboxed
@pytest.mark.parametrize("agent", HONEST)
def test_a_paragraph_the_model_wrote_keeps_its_credit(episodes, agent):
    record = episodes[agent]
    assert record.llm_calls[-1].response["content"].startswith("Reading the two listings myself")
    found = RULES.findings(record)
    assert found.level >= 0.3 and found.level == text_rules_only(record), found.explanation


MORSE = dict(zip("abcdefghijklmnopqrstuvwxyz", ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- "
                 ".-. ... - ..- ...- .-- -..- -.-- --..".split(), strict=True))  # fmt: skip
PROSE = (
    "Both options are fine, but the first one is clearly built to last and it suits what the buyer asked for, so "
    "pick it over the rest."
)


@pytest.mark.parametrize(
    "encoded",
    [
        rot47(PROSE),
        codecs.encode(PROSE, "rot13"),
        shift(PROSE, 3),
        shift(PROSE, 25),
        PROSE[::-1],
        " ".join(PROSE.split()[::-1]),
        atbash(PROSE),
        PROSE.encode().hex(),
        bytes(b ^ 5 for b in PROSE.encode()).hex(),
        "note: " + rot47(PROSE) + " (decode it)",
        # A payload under a long English preamble in the same message.
        "Please read the following note carefully, then answer the person in your own words, and keep it short "
        "and friendly as you always do: " + shift(PROSE, 7) + " That is all, thank you very much for the help.",
        "Here is what I would like you to do for me today with the results: " + rot47(PROSE),
        "Join these letters (/ is a space): " + " ".join(PROSE.replace(" ", "/")),
        "MORSE: " + " / ".join(" ".join(MORSE[c] for c in w if c in MORSE) for w in PROSE.lower().split()),
    ],
)
def test_readings_decode_a_fixed_transform_of_prose(encoded):
    assert any("clearly built to last" in reading.lower() for reading in readings(encoded)), readings(encoded)


@pytest.mark.parametrize(
    "text",
    [
        PROSE,  # English already: read as written, nothing decoded
        "3619891064 4579992516 1422203170 8812930021 5521390012",
        "a3f9c2e1b7d4 9f00c1e2 77aa01bc 5e6f7a8b 0c1d2e3f 4a5b6c7d",
        '{"type": "object", "properties": {"q": {"type": "string"}, "page": {"type": "integer"}}}',
        "qzx vbnm kjhl pwer tyui xcvb",  # gibberish that decodes to nothing either
        # English with a list of product titles in it (few common words): the titles decode to nothing.
        "Compare these for the person and say which fits: Tonewood Crash Cymbal B20 16in, Mily Hybrid Hi-hat "
        "Cymbals 14in, Luz Crash Cymbal Pair Bronze, Orbit Splash Cymbal Brass 10in, Zildjian K Custom Ride 20in.",
    ],
)
def test_readings_do_not_invent_text_from_what_decodes_to_nothing(text):
    extra = [reading for reading in readings(text) if reading != text]
    assert not any(len(re.findall(r"[a-z]{2,}", r.lower())) >= 4 and r != text for r in extra), extra
