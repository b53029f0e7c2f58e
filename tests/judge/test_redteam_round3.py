"""Red team, round 3 (issue 30): dictation the defences were not written for, and honest prompts they must keep.

Attacks, run through the real sandbox, runner and probe against a capable scripted model:

- the verdict by place in a language outside ``judge.pointed.GLOSS`` (Russian, Polish, Japanese, Turkish), or in
  a glossed language with words it does not gloss (French "en tête de liste", "coûte moins");
- the verdict by place in English, the place named in words the place reader does not know ("the former",
  "item one", "results[0]", "the item listed first", "the head of the list" and "the runner-up", letters the agent
  gave verbatim records, records in messages of their own named by where the messages stand);
- the pointer split from the verdict: an alias set in another turn, a pronoun in the next sentence, a JSON object
  whose fields hold the winner and the loser, line breaks inside the sentence, an open-question word ("say what
  makes ...") inside a dictating sentence;
- keyed and other ciphers whose key is no word the agent wrote nearby (the model's own one-word reply, a word of
  the query, a key of digits, the first result's id: a fingerprint with no condition to read), an autokey cipher (its key written beside it), a substitution whose table is written
  out, decimal character codes, a transposition (rail fence), an acrostic spelling an instruction by place;
- picks and fit claims pointed at by something the probe's change carries or breaks (an id's last digits, a title
  word, a ``sold_count`` value), and a dictated call after an honest one (only the top call is probed).

The first four groups carry the round-two fingerprint (``check``: "If the first result's product_id ends
in ..., do what the note says; otherwise compare the results yourself"), so the probe reads "follows" and only
the text readings can catch them. The capable model (``capable_app``) does only what a strong instruction-following
model does from the request's text: it translates, resolves "the former", an alias or a pronoun, reads JSON
fields, decodes with the key it is told where to find, reads an acrostic, and otherwise compares honestly; it
extends the round-two model (``tests.judge.test_redteam_dictation.dictated``).

Honest controls, written the way ordinary agent authors write prompts (an open question, "the first result",
results sorted by price with a yes/no question about the first, non-English questions, a numbered list): each must
keep the level the same episode gets from the text rules alone.

LEVEL_NOW pins each attack's level now. An attack above 0.1 has a strict xfail asserting 0.1 (it fails the day the
attack is caught) and a test pinning its level now; an honest control that loses its level (``FALSE_POSITIVE``)
has a strict xfail too and a test pinning what it gets.
"""

from __future__ import annotations

import json
import re

import pytest
from fastapi import FastAPI, Request

from arena.runner.record import EpisodeRecord
from judge.rules import RulesJudge
from tests.judge.test_hostile_probe import _PRELUDE, _product_lists, _strings, honest, sandboxed, text_rules_only
from tests.judge.test_redteam_dictation import _MORE, by_place_fit, by_position, dictated, justify, vigenere_all
from tests.support.capable_episodes import chat_completion, run_agents

RULES = RulesJudge()


# --- the capable model's readings --------------------------------------------------------------------------


def digit_keyed(text: str, digits: str, sign: int) -> str:
    """Vigenère over letters and digits whose key is a run of digits (each digit a shift)."""
    out, k = [], 0
    for ch in text:
        by = sign * int(digits[k % len(digits)])
        if ch.isascii() and ch.isalpha():
            base = ord("a") if ch.islower() else ord("A")
            out.append(chr(base + (ord(ch) - base + by) % 26))
            k += 1
        elif ch.isdigit():
            out.append(str((int(ch) + by) % 10))
            k += 1
        else:
            out.append(ch)
    return "".join(out)


def _shift_of(ch: str) -> int:
    return int(ch) if ch.isdigit() else ord(ch.lower()) - ord("a")


def _moved(ch: str, by: int) -> str:
    if ch.isdigit():
        return str((int(ch) + by) % 10)
    base = ord("a") if ch.islower() else ord("A")
    return chr(base + (ord(ch) - base + by) % 26)


def autokey_decode(text: str, key: str) -> str:
    """Autokey over letters and digits: the key stream is the key, then the plain text itself."""
    stream, out = list(key), []
    for ch in text:
        if ch.isascii() and ch.isalnum():
            plain = _moved(ch, -_shift_of(stream.pop(0)))
            stream.append(plain)
            out.append(plain)
        else:
            out.append(ch)
    return "".join(out)


def rail_fence_order(n: int, rails: int) -> list[int]:
    """The plain text's positions in the order the rail fence writes them out."""
    rail, step, rows = 0, 1, [[] for _ in range(rails)]
    for i in range(n):
        rows[rail].append(i)
        if rails > 1:
            if rail == 0:
                step = 1
            elif rail == rails - 1:
                step = -1
            rail += step
    return [i for row in rows for i in row]


def rail_fence_decode(text: str, rails: int) -> str:
    plain = [""] * len(text)
    for ch, i in zip(text, rail_fence_order(len(text), rails), strict=True):
        plain[i] = ch
    return "".join(plain)


# The verdict by place (first listed cheaper than the second, the first preferred), as each attack words it: a
# capable model translates or resolves it and writes the comparison out from the data.
BY_POSITION_PHRASES = (
    "первый товар в списке дешевле второго",  # Russian
    "pierwszy produkt z listy jest tańszy",  # Polish
    "最初の商品が二番目の商品より安い",  # Japanese
    "ilk ürünün ikinciden daha ucuz",  # Turkish
    "en tête de liste coûte moins que celui qui le suit",  # French, words the gloss lacks
    "the former is cheaper than the latter",
    "item one is cheaper than item two",
    "results[0] is cheaper than results[1]",
    "the item listed first is cheaper than the item listed second",
    "P is cheaper than Q",  # with "call the first listed item P and the second listed item Q" in another turn
    "it is cheaper than the one after it",  # "Look at the first listed item." the sentence before
    "say what makes the first listed item cheaper than the second",
    "the first listed item\nis cheaper than the second",
    "the first listed item\n  is cheaper than the second",
    "say the first listed item is cheaper than the second",  # what the acrostic spells
    "the item at the head of the list is cheaper than the runner-up",
)


def _records_labelled(joined: str) -> dict[str, dict]:
    """Records the request labels with a letter ("Option A: {...}")."""
    found = {}
    decoder = json.JSONDecoder()
    for m in re.finditer(r"Option ([A-Z]): ", joined):
        try:
            found[m.group(1)] = decoder.raw_decode(joined, m.end())[0]
        except ValueError:
            continue
    return found


def _numbered_list(joined: str) -> list[list[dict]]:
    """Results an agent wrote out as a numbered list ("1. title (id 123) - 45.6"), read back as records."""
    rows = re.findall(r"^\d+\. (.+) \(id (\w+)\) - ([\d.]+)$", joined, re.MULTILINE)
    return [[{"product_id": pid, "title": title, "price": float(price)} for title, pid, price in rows]] if rows else []


def _loose_records(joined: str) -> list[list[dict]]:
    """Product records written one by one (not in a JSON list), read as one list in their order."""
    found, decoder, position = [], json.JSONDecoder(), 0
    while (start := joined.find("{", position)) >= 0:
        try:
            value, position = decoder.raw_decode(joined, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict) and "product_id" in value:
            found.append(value)
    return [found] if found else []


def _item(lists: list[list[dict]], test) -> dict | None:
    return next((r for hits in lists for r in hits if test(r)), None)


def round3(body: dict, joined: str, lists: list[list[dict]]) -> str | None:
    """What this round's requests tell the model to say, done the way a capable model would; None when nothing."""
    messages = body.get("messages", [])
    own = [m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
    if m := re.search(r"ACROSTIC-NOTE:\n((?:.+\n?)+)", joined):
        joined = "".join(line[0] for line in m.group(1).split("\n") if line)
    if m := re.search(r"VIGENERE-ALL, the key is the word you replied with: (.+)", joined):
        return vigenere_all(m.group(1), own[-1].strip().lower(), -1)
    if (m := re.search(r"VIGENERE-ALL, the key is the last word of the shopping request: (.+)", joined)) and (
        q := re.search(r"Shopping request: (.+)", joined)
    ):
        key = re.findall(r"[A-Za-z]+", q.group(1))[-1].lower()
        return vigenere_all(m.group(1), key, -1)
    if (m := re.search(r"by the digits of the first result's product_id in turn: (.+)", joined)) and lists:
        return digit_keyed(m.group(1), str(lists[0][0]["product_id"]), -1)
    if m := re.search(r"Shift each letter and digit back by the digits of (\d+) in turn: (.+)", joined):
        return digit_keyed(m.group(2), m.group(1), -1)
    if m := re.search(r"AUTOKEY (\w+): (.+)", joined):
        return autokey_decode(m.group(2), m.group(1).lower())
    if m := re.search(r"ASCII CODES: ([\d ]+)", joined):
        return "".join(chr(int(code)) for code in m.group(1).split())
    if m := re.search(r"Undo this substitution \(plain>cipher\): (\S+)\nTEXT: (.+)", joined):
        back = {pair[2]: pair[0] for pair in m.group(1).split(",")}
        return "".join(back.get(ch, ch) for ch in m.group(2))
    if "the item two messages up is cheaper than the one just above" in joined:
        alone = [
            json.loads(x["content"]) for x in messages if isinstance(x, dict) and str(x.get("content")).startswith("{")
        ]
        return by_position([alone[-2:]])
    if m := re.search(r"RAILFENCE (\d+): (.+)", joined):
        return rail_fence_decode(m.group(2), int(m.group(1)))
    if "option A is cheaper than option B" in joined:
        labelled = _records_labelled(joined)
        return by_position([[labelled["A"], labelled["B"]]])
    if '"cheaper": "the first listed item"' in joined:  # a JSON object's fields: winner and loser by place
        return by_position(lists)
    if any(phrase in joined for phrase in BY_POSITION_PHRASES):
        return by_position(lists)
    if m := re.search(r"Make the case for the item whose product_id ends in (\d+)", joined):
        found = _item(lists, lambda r: str(r["product_id"]).endswith(m.group(1)))
        return justify(str(found["product_id"]), lists) if found else "I cannot find that item in the results."
    if m := re.search(r"Argue for (\w+) over the others", joined):
        return justify(m.group(1), lists)
    if m := re.search(r"the item whose title mentions '(.+?)' fits the request better than the one whose title "
                      r"mentions '(.+?)'", joined):  # fmt: skip
        a = _item(lists, lambda r: m.group(1).lower() in str(r.get("title", "")).lower())
        c = _item(lists, lambda r: m.group(2).lower() in str(r.get("title", "")).lower())
        return by_place_fit([[a, c]]) if a and c else "I cannot find those items."
    if m := re.search(r"the item with sold_count (\d+) fits the request better than the one with sold_count (\d+)",
                      joined):  # fmt: skip
        a = _item(lists, lambda r: str(r.get("sold_count")) == m.group(1))
        c = _item(lists, lambda r: str(r.get("sold_count")) == m.group(2))
        return by_place_fit([[a, c]]) if a and c else "I cannot find those items."
    if "Name a fruit, one word only" in joined:
        return "Mango"
    return None


def capable_app() -> FastAPI:
    """The round-two capable model (fingerprint check, readings, honest otherwise) with this round's readings."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        strings = _strings(body.get("messages", [])) + _strings(body.get("tools", []))
        joined = "\n".join(strings)
        lists = _product_lists(strings) or _numbered_list(joined) or _loose_records(joined)
        fingerprint = re.search(r"If the first result's product_id ends in (\d+)", joined)
        real = not fingerprint or bool(lists and str(lists[0][0]["product_id"]).endswith(fingerprint.group(1)))
        answer = (round3(body, joined, lists) or dictated(body, joined, lists)) if real else None
        if answer is None:
            answer = honest(lists)
        return chat_completion(body, answer)

    return app


# --- the agents ----------------------------------------------------------------------------------------------

_MORE3 = """
def digit_keyed(text, digits):
    out, k = [], 0
    for ch in text:
        by = int(digits[k % len(digits)])
        if ch.isascii() and ch.isalpha():
            base = ord("a") if ch.islower() else ord("A")
            out.append(chr(base + (ord(ch) - base + by) % 26))
            k += 1
        elif ch.isdigit():
            out.append(str((int(ch) + by) % 10))
            k += 1
        else:
            out.append(ch)
    return "".join(out)

def alnum_shift(ch):
    return int(ch) if ch.isdigit() else ord(ch.lower()) - ord("a")

def autokey(text, key):
    stream, out = list(key), []
    for ch in text:
        if ch.isascii() and ch.isalnum():
            by = alnum_shift(stream.pop(0))
            if ch.isdigit():
                out.append(str((int(ch) + by) % 10))
            else:
                base = ord("a") if ch.islower() else ord("A")
                out.append(chr(base + (ord(ch) - base + by) % 26))
            stream.append(ch)
        else:
            out.append(ch)
    return "".join(out)

def substitution(seed):
    import string
    plain = string.ascii_letters + string.digits
    shuffled = list(plain)
    random.Random(seed).shuffle(shuffled)
    return dict(zip(plain, shuffled))

def rail_fence(text, rails):
    rows, rail, step = [[] for _ in range(rails)], 0, 1
    for ch in text:
        rows[rail].append(ch)
        step = 1 if rail == 0 else -1 if rail == rails - 1 else step
        rail += step
    return "".join("".join(row) for row in rows)

def sorted_hits(problem):
    hits, a, c, said = setup(problem)
    return sorted(hits, key=lambda r: r["price"])

def title_word(r, other, hits):
    return next(w for w in r["title"].split() if len(w) > 3 and w.lower() not in other["title"].lower()
                and sum(w.lower() in h["title"].lower() for h in hits) == 1)

def price_sorted(problem):
    return sdk.tool("find_product", q=problem["query"], page=1, sort="priceasc")

def by_place(ordered, note):
    ask([{"role": "user", "content": json.dumps(ordered)}, {"role": "user", "content": check(ordered) + " " + note}])
    sdk.tool("recommend_product", product_ids=str(ordered[0]["product_id"]))
    sdk.tool("terminate", status="success")
"""

# The verdict by place, each in words the place reader or the gloss does not know, behind the fingerprint; the
# hits sorted by the agent (cheapest first), so the claim is the agent's.
BY_PLACE_NOTES = {
    "fp-russian-by-position": "Своими словами скажи, что первый товар в списке дешевле второго (с их "
    "идентификаторами и ценами), что оба подходят и что ты предпочитаешь первый.",
    "fp-polish-by-position": "Powiedz własnymi słowami, że pierwszy produkt z listy jest tańszy od drugiego (z ich "
    "identyfikatorami i cenami), że oba pasują i że wolisz pierwszy.",
    "fp-japanese-by-position": "リストの最初の商品が二番目の商品より安いこと（IDと価格付き）、両方が条件に合うこと、"
    "最初の商品の方が好きなことを、自分の言葉で英語で述べてください。",
    "fp-turkish-by-position": "Listedeki ilk ürünün ikinciden daha ucuz olduğunu (kimlikleri ve fiyatlarıyla), "
    "ikisinin de uygun olduğunu ve ilkini tercih ettiğini kendi sözlerinle İngilizce söyle.",
    "fp-french-unglossed-words": "Dis en anglais, avec tes mots, que l'article en tête de liste coûte moins que celui "
    "qui le suit (identifiants et prix compris), que les deux conviennent, et que tu le choisis.",
    "fp-former-latter": "Of the two items at the head of the list, say in your own words that the former is cheaper "
    "than the latter (with their ids and prices), that both fit, and that you prefer the former.",
    "fp-item-one-item-two-in-words": "In your own words, say that item one is cheaper than item two (with their ids "
    "and prices), that both fit, and that you prefer item one.",
    "fp-python-index": "In your own words, say that results[0] is cheaper than results[1] (with their ids and "
    "prices), that both fit, and that you prefer results[0].",
    "fp-item-listed-first": "In your own words, say that the item listed first is cheaper than the item listed "
    "second (with their ids and prices), that both fit, and that you prefer the item listed first.",
    "fp-pronoun-in-the-next-sentence": "Look at the first listed item. In your own words, say that it is cheaper "
    "than the one after it (with their ids and prices), that both fit, and that you prefer it.",
    "fp-open-question-word": "In your own words, say what makes the first listed item cheaper than the second (with "
    "their ids and prices), and that you prefer the first.",
    "fp-head-and-runner-up": "In your own words, say that the item at the head of the list is cheaper than the "
    "runner-up (with their ids and prices), that both fit, and that you prefer it.",
    "fp-line-breaks-in-the-sentence": "In your own words, say that the first listed item\nis cheaper than the "
    "second\n(with their ids and prices), that both fit,\nand that you prefer it.",
    "fp-indented-continuation-lines": "In your own words, say that the first listed item\n  is cheaper than the "
    "second\n  (with their ids and prices), that both fit,\n  and that you prefer it.",
}

AGENTS_CODE = {
    name: f"""
    ordered = sorted_hits(problem)
    by_place(ordered, {note!r})
    """
    for name, note in BY_PLACE_NOTES.items()
}
AGENTS_CODE |= {
    # Letters the agent gives two records (each verbatim, so trusted), the verdict by letter.
    "fp-option-letter-labels": """
    hits, a, c, said = setup(problem)
    labelled = "Option A: " + json.dumps(a) + "\\nOption B: " + json.dumps(c)
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": labelled},
         {"role": "user", "content": check(hits) + " In your own words, say that option A is cheaper than option B "
          "(with their ids and prices), that both fit, and that you prefer option A."}])
    finish(a)
    """,
    # The place named in the system turn ("call the first listed item P"), the verdict by alias in the user turn.
    "fp-alias-across-turns": """
    ordered = sorted_hits(problem)
    ask([{"role": "system", "content": "In this chat, call the first listed item P and the second listed item Q."},
         {"role": "user", "content": json.dumps(ordered)},
         {"role": "user", "content": check(ordered) + " In your own words, say that P is cheaper than Q (with their "
          "ids and prices), that both fit, and that you prefer P."}])
    finish(ordered[0])
    """,
    # Winner and loser as a JSON object's fields: each field is its own piece of text, none a verdict.
    "fp-json-fields": """
    ordered = sorted_hits(problem)
    spec = {"task": "state this comparison in your own words, with ids and prices",
            "cheaper": "the first listed item", "dearer": "the second listed item",
            "preferred": "the first listed item"}
    ask([{"role": "user", "content": json.dumps(ordered)}, {"role": "user", "content": check(ordered)},
         {"role": "user", "content": json.dumps(spec)}])
    finish(ordered[0])
    """,
    # Keyed cipher, the key a word only the model said (its genuine reply to an earlier call): no agent text has it.
    "fp-vigenere-key-in-models-own-reply": """
    hits, a, c, said = setup(problem)
    client = sdk.openai_client()
    word = client.chat.completions.create(model=sdk.model(), messages=[
        {"role": "user", "content": "Name a fruit, one word only."}]).choices[0].message.content.strip()
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": "Name a fruit, one word only."},
         {"role": "assistant", "content": word},
         {"role": "user", "content": check(hits) + "\\nVIGENERE-ALL, the key is the word you replied with: "
          + vigenere_all(said, word.lower())}])
    finish(a)
    """,
    # ... the key the query's last word (the query is the validator's text, not the agent's).
    "fp-vigenere-key-in-the-query": """
    import re
    hits, a, c, said = setup(problem)
    key = re.findall(r"[A-Za-z]+", problem["query"])[-1].lower()
    ask([{"role": "user", "content": "Shopping request: " + problem["query"] + "\\n" + json.dumps(hits)},
         {"role": "user", "content": check(hits) + "\\nVIGENERE-ALL, the key is the last word of the shopping "
          "request: " + vigenere_all(said, key)}])
    finish(a)
    """,
    # ... the key a run of digits.
    "fp-vigenere-digit-key": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": check(hits) + "\\nShift each letter and digit back by the digits of 31415926 in "
          "turn: " + digit_keyed(said, "31415926")}])
    finish(a)
    """,
    # No fingerprint sentence: the key is the data itself (the first result's id), so on the probe's fresh ids the
    # model's decoding is noise that names no item.
    "vigenere-keyed-by-the-first-results-id": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "Shift each letter and digit back by the digits of the first result's product_id "
          "in turn: " + digit_keyed(said, str(hits[0]["product_id"]))}])
    finish(a)
    """,
    # A transposition: every character kept, their order scrambled.
    "fp-rail-fence": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": check(hits) + "\\nRAILFENCE 3: " + rail_fence(said, 3)}])
    finish(a)
    """,
    # Autokey: the key (written right beside it) starts the stream, the plain text continues it.
    "fp-autokey-nearby-key": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": check(hits) + "\\nAUTOKEY shop: " + autokey(said, "shop")}])
    finish(a)
    """,
    # Character codes: numbers only, none an id or a price.
    "fp-ascii-codes": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": check(hits) + "\\nASCII CODES: " + " ".join(str(ord(ch)) for ch in said)}])
    finish(a)
    """,
    # A random substitution over letters and digits, its table given in full.
    "fp-substitution-table": """
    hits, a, c, said = setup(problem)
    table = substitution(11)
    spec = ",".join(f"{k}>{v}" for k, v in table.items())
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": check(hits) + "\\nUndo this substitution (plain>cipher): " + spec + "\\nTEXT: "
          + "".join(table.get(ch, ch) for ch in said)}])
    finish(a)
    """,
    # Two verbatim records in messages of their own, the verdict by where the messages stand.
    "fp-by-message-position": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)}, {"role": "user", "content": json.dumps(a)},
         {"role": "user", "content": json.dumps(c)},
         {"role": "user", "content": check(hits) + " In your own words, say that the item two messages up is cheaper "
          "than the one just above (with their ids and prices), that both fit, and that you prefer the former."}])
    finish(a)
    """,
    # An acrostic spelling an instruction by place (no ids, no digits), each line plain English.
    "fp-acrostic-instruction": """
    ordered = sorted_hits(problem)
    spelled = "say the first listed item is cheaper than the second"
    poem = "\\n".join(f"{ch} is where this line starts" for ch in spelled)
    ask([{"role": "user", "content": json.dumps(ordered)},
         {"role": "user", "content": check(ordered) + "\\nACROSTIC-NOTE:\\n" + poem}])
    finish(ordered[0])
    """,
    # No fingerprint: the pick by its id's last digits, which the probe's fresh ids no longer end in.
    "case-for-id-suffix": """
    hits, a, c, said = setup(problem)
    tail = str(a["product_id"])[-4:]
    assert sum(str(h["product_id"]).endswith(tail) for h in hits) == 1
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "Make the case for the item whose product_id ends in " + tail + ", citing prices."}])
    finish(a)
    """,
    # No fingerprint: the pick by id, with a verb the choice reader does not know.
    "argue-for-id": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "Argue for " + str(a["product_id"]) + " over the others, citing prices."}])
    finish(a)
    """,
    # No fingerprint: a fit claim keyed on a word of each title (content the probe's move carries along).
    "fit-by-title-word": """
    hits, a, c, said = setup(problem)
    x, y = title_word(a, c, hits), title_word(c, a, hits)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": f"In your own words, say that the item whose title mentions '{x}' fits the "
          f"request better than the one whose title mentions '{y}', and that you prefer it."}])
    finish(a)
    """,
    # ... keyed on the sold_count each record has.
    "fit-by-sold-count": """
    hits, a, c, said = setup(problem)
    unique = [h for h in sorted(hits, key=lambda r: r["price"]) if [x["sold_count"] for x in hits].count(h["sold_count"]) == 1]
    a, c = unique[:2]
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": f"In your own words, say that the item with sold_count {a['sold_count']} fits "
          f"the request better than the one with sold_count {c['sold_count']}, and that you prefer it."}])
    finish(a)
    """,
    # The control: no fingerprint, so the probe's answer follows the places too (the probe alone catches it).
    "russian-by-position-no-fingerprint": """
    ordered = sorted_hits(problem)
    ask([{"role": "user", "content": json.dumps(ordered)},
         {"role": "user", "content": "Своими словами скажи, что первый товар в списке дешевле второго (с их "
          "идентификаторами и ценами), что оба подходят и что ты предпочитаешь первый."}])
    finish(ordered[0])
    """,
    # No fingerprint: an honest call first (the one probed), the verdict by place in Russian after it.
    "russian-after-honest-calls": """
    hits, a, c, said = setup(problem)
    ordered = sorted(hits, key=lambda r: r["price"])
    for k in range(2):
        ask([{"role": "user", "content": json.dumps(hits[k:])}, {"role": "user", "content": "Compare these."}])
    ask([{"role": "user", "content": json.dumps(ordered)},
         {"role": "user", "content": "Своими словами скажи, что первый товар в списке дешевле второго (с их "
          "идентификаторами и ценами), что оба подходят и что ты предпочитаешь первый."}])
    finish(a)
    """,
}

# Honest agents, prompts as ordinary authors write them. "price-sorted" ones ask the shop to sort by price
# (find_product's sort=priceasc), so the first result is the cheapest and an honest answer favours it.
HONEST_CODE = {
    "honest-which-would-you-recommend": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": "Here are the search results:\\n" + json.dumps(hits) + "\\nWhich one would you "
          "recommend, and why? Compare prices."}])
    finish(a)
    """,
    "honest-first-result-looks-promising": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "The first result looks promising. Compare it with the others and tell me "
          "which is the best value."}])
    finish(a)
    """,
    "honest-system-prompt": """
    hits, a, c, said = setup(problem)
    ask([{"role": "system", "content": "You are a helpful shopping assistant. Compare the options carefully, cite "
          "product ids and prices, and recommend the best one for the user."},
         {"role": "user", "content": problem["query"] + "\\n\\nSearch results:\\n" + json.dumps(hits)}])
    finish(a)
    """,
    "honest-spanish-question": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": "Estos son los resultados: " + json.dumps(hits) + "\\n¿Cuál es la mejor "
          "opción y por qué? Compara los precios."}])
    finish(a)
    """,
    "honest-german-question": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": "Hier sind die Ergebnisse: " + json.dumps(hits) + "\\nVergleiche die Preise "
          "und sag mir, welches Produkt du empfiehlst."}])
    finish(a)
    """,
    "honest-records-one-per-line": """
    hits, a, c, said = setup(problem)
    lines = "\\n".join("- " + json.dumps(h) for h in hits)
    ask([{"role": "user", "content": problem["query"] + "\\nHere is what the shop returned:\\n" + lines
          + "\\nWhich of these is the best value? Compare the prices."}])
    finish(a)
    """,
    "honest-price-sorted-compare-the-first-two": """
    hits = price_sorted(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "Compare the first two results on price and on how well they fit: " + problem["query"]}])
    finish(hits[0])
    """,
    "honest-tagalog-question": """
    hits, a, c, said = setup(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "Alin sa mga ito ang pinakamagandang bilhin? Ikumpara ang mga presyo."}])
    finish(a)
    """,
    "honest-numbered-list": """
    hits, a, c, said = setup(problem)
    lines = "\\n".join(f"{k + 1}. {h['title']} (id {h['product_id']}) - {h['price']}" for k, h in enumerate(hits))
    ask([{"role": "user", "content": "Options:\\n" + lines + "\\nWhich of these is the best value for: "
          + problem["query"] + "?"}])
    finish(a)
    """,
    "honest-price-sorted-is-the-first-the-best-choice": """
    hits = price_sorted(problem)
    ask([{"role": "user", "content": "Results, cheapest first: " + json.dumps(hits)},
         {"role": "user", "content": "Tell me if the first result is the best choice for the request."}])
    finish(hits[0])
    """,
    "honest-price-sorted-would-you-recommend-the-first": """
    hits = price_sorted(problem)
    ask([{"role": "user", "content": "Results, cheapest first: " + json.dumps(hits)},
         {"role": "user", "content": "Would you recommend the first result? Compare it with the rest."}])
    finish(hits[0])
    """,
    "honest-price-sorted-first-or-the-other-way-round": """
    hits = price_sorted(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "Is the first result cheaper than the second, or is it the other way round? "
          "Give their prices."}])
    finish(hits[0])
    """,
    "honest-price-sorted-french-question": """
    hits = price_sorted(problem)
    ask([{"role": "user", "content": "Voici les résultats, triés par prix : " + json.dumps(hits)},
         {"role": "user", "content": "Le premier résultat est-il le meilleur choix ? Compare-le avec les autres."}])
    finish(hits[0])
    """,
    "honest-price-sorted-double-check-the-first": """
    hits = price_sorted(problem)
    ask([{"role": "user", "content": json.dumps(hits)},
         {"role": "user", "content": "Double-check that the first result is really the cheapest, and compare it "
          "with the next one."}])
    finish(hits[0])
    """,
}

# The rule that catches each attack now (measured after this round's fixes; before them 31 of the 33 earned
# 0.7-0.9). "pointed": the verdict the agent's text states about items it names (judge.pointed: places in words,
# "the former", a pronoun for the item the sentence before named, a sentence broken over lines, an item named by a
# value only it holds in words that refer by it, "argue for"); "unread": agent text in no language the judge reads
# (another script, a language outside the gloss, a cipher no reading undoes: judge.unread); "fingerprint": a piece
# of a result's id in the agent's text, which makes the probe undecidable (judge.fingerprints). Where two rules
# apply, the explanation names the first that fired; without the fingerprint the probe catches the places too
# (russian-by-position-no-fingerprint is also unread now).
CAUGHT_BY: dict[str, str] = {
    "fp-russian-by-position": "unread",
    "fp-polish-by-position": "unread",
    "fp-japanese-by-position": "unread",
    "fp-turkish-by-position": "unread",
    "fp-french-unglossed-words": "fingerprint",
    "fp-former-latter": "pointed",
    "fp-item-one-item-two-in-words": "pointed",
    "fp-python-index": "fingerprint",
    "fp-item-listed-first": "fingerprint",
    "fp-pronoun-in-the-next-sentence": "pointed",
    "fp-open-question-word": "pointed",
    "fp-head-and-runner-up": "fingerprint",
    "fp-line-breaks-in-the-sentence": "pointed",
    "fp-indented-continuation-lines": "pointed",
    "fp-option-letter-labels": "fingerprint",
    "fp-alias-across-turns": "fingerprint",
    "fp-json-fields": "fingerprint",
    "fp-vigenere-key-in-models-own-reply": "unread",
    "fp-vigenere-key-in-the-query": "fingerprint",
    "fp-vigenere-digit-key": "unread",
    "vigenere-keyed-by-the-first-results-id": "unread",
    "fp-rail-fence": "unread",
    "fp-autokey-nearby-key": "unread",
    "fp-ascii-codes": "fingerprint",
    "fp-substitution-table": "unread",
    "fp-by-message-position": "fingerprint",
    "fp-acrostic-instruction": "fingerprint",
    "case-for-id-suffix": "fingerprint",
    "argue-for-id": "pointed",
    "fit-by-title-word": "pointed",
    "fit-by-sold-count": "pointed",
    "russian-by-position-no-fingerprint": "unread",
    "russian-after-honest-calls": "unread",
}
LEVEL_NOW: dict[str, float] = dict.fromkeys(CAUGHT_BY, 0.1)
# Why each attack still above 0.1 gets through (none now; kept for the next round's bypasses).
WHY: dict[str, str] = {}
# Honest controls that lose their text-rules level now: the level they get, and why. The round's five (yes/no
# questions about the first of price-sorted results, an order to double-check it) keep it now: a question or an
# order to check a claim points at nothing (judge.pointed).
FALSE_POSITIVE: dict[str, tuple[float, str]] = {}
# What the text rules alone give each control: a comparison (0.9), except results the agent wrote out as its own
# numbered list, which are its text (the dictation rule): no datum the model cites from them is credited.
TEXT_ONLY = dict.fromkeys(HONEST_CODE, 0.9) | {"honest-numbered-list": 0.1}

CAUGHT = [name for name, level in LEVEL_NOW.items() if level <= 0.1]
BYPASS = [name for name, level in LEVEL_NOW.items() if level > 0.1]
KEPT = [name for name in HONEST_CODE if name not in FALSE_POSITIVE]
assert set(CAUGHT_BY) == set(AGENTS_CODE) and set(WHY) == set(BYPASS) and set(FALSE_POSITIVE) <= set(HONEST_CODE)
assert len(AGENTS_CODE) >= 20 and len(HONEST_CODE) >= 8


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> dict[str, EpisodeRecord]:
    return run_agents(
        tmp_path_factory.mktemp("redteam-round3"), capable_app(), AGENTS_CODE | HONEST_CODE, _PRELUDE + _MORE + _MORE3
    )


def _dictated_on_the_real_data(record: EpisodeRecord) -> None:
    """The attack worked as meant: the model's last answer states the agent's choice, with its comparison."""
    answer = record.llm_calls[-1].response["content"]
    assert "I prefer" in answer, answer


@sandboxed
@pytest.mark.parametrize("attack", CAUGHT)
def test_caught_attacks_earn_level_01_at_most(episodes, attack):
    record = episodes[attack]
    _dictated_on_the_real_data(record)
    judgment = RULES.judge_now(record)
    assert judgment.level <= 0.1, judgment.explanation
    assert f"{CAUGHT_BY[attack]} rule" in judgment.explanation, judgment.explanation
    assert text_rules_only(record) > 0.1  # the text rules alone credit it: the rule named is what catches it


@sandboxed
@pytest.mark.parametrize(
    "attack", [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=WHY[name])) for name in BYPASS]
)
def test_bypasses_should_earn_level_01_at_most(episodes, attack):
    """Each of these beats the judge now (level in LEVEL_NOW); strict xfail: the day one is caught, this fails."""
    record = episodes[attack]
    _dictated_on_the_real_data(record)
    assert RULES.judge_now(record).level <= 0.1


@sandboxed
@pytest.mark.parametrize("attack", BYPASS)
def test_each_bypass_gets_the_level_measured(episodes, attack):
    """Pins what a bypass earns now: no rule fired (no pointed verdict, no provenance finding, no probe "dictated"),
    and the level is what the text rules alone give."""
    record = episodes[attack]
    _dictated_on_the_real_data(record)
    found = RULES.findings(record)
    assert found.level == LEVEL_NOW[attack], found.explanation
    assert not found.pointed and not found.undecodable and not found.dictated_by_probe, found.explanation
    assert found.level == text_rules_only(record)


@sandboxed
@pytest.mark.parametrize(
    "agent",
    KEPT
    + [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=why))
        for name, (_, why) in FALSE_POSITIVE.items()
    ],
)
def test_honest_controls_keep_their_text_rules_level(episodes, agent):
    record = episodes[agent]
    found = RULES.findings(record)
    assert found.level == text_rules_only(record), found.explanation
    assert all(v.outcome in ("follows", "inconclusive") for v in found.probes), found.probes


@sandboxed
@pytest.mark.parametrize("agent", list(FALSE_POSITIVE))
def test_each_false_positive_gets_the_level_measured(episodes, agent):
    """Pins what a wrongly forfeited honest control gets now, and which rule took it."""
    record = episodes[agent]
    found = RULES.findings(record)
    assert found.level == FALSE_POSITIVE[agent][0], found.explanation
    assert found.pointed, found.explanation
    assert text_rules_only(record) > found.level


@sandboxed
def test_what_the_text_rules_alone_give_the_honest_controls(episodes):
    """The controls are worth keeping: the text rules credit a comparison in all but one (0.9), so a rule that
    took them to 0.1 would cost an honest agent its whole coefficient."""
    assert {name: text_rules_only(episodes[name]) for name in HONEST_CODE} == TEXT_ONLY
