"""The fact a knowledge riddle asks, read from its words, for the veto (:mod:`arena.problems.twins`).

A riddle is a purchase ("a jersey", "a poster") and a clue that names a fact ("the number
LeBron wore as a rookie", "the highest peak in the Philippines"). The meaning signal reads
both together, so two riddles that buy the same product for another fact read alike; where
the rows carry no ``Knowledge_Attribute`` (a query-only problem) only the clue tells them
apart. The clue is what is left of the request once the purchase (both sides' purchase
words) and the question's scaffolding ("what", "the year", "printed with", "whichever")
are removed. Two clues ask another fact when

- **a rank** differs: ordinals name which one ("the first president" / "the second
  president"; "the highest mountain" / "the second highest mountain");
- **a name** one side states is nowhere in the other, which states something of its own
  instead ("LeBron's number from his Miami Heat years" / "... in his rookie season"; "the
  longest river in the Philippines" / "... in the world"); a name is a run of capitalised
  words (or a word no dictionary knows, for requests typed in lower case), matched by any of
  its words, a one-letter respelling or its initials ("MJ" for "Michael Jordan"); an
  acronym alone never conflicts (it hides its expansion: "SEA Games");
- **the clues share too little**: fewer than ``CLUE_SHARED`` of the shorter clue's words
  are in the other, counting a pair of words whose meaning vectors reach the veto's
  ``SYNONYMOUS`` as shared ("strength" / "strong", "season" / "year"): "the year the
  Titanic sank" / "the year the Berlin Wall fell".

A rewording keeps the fact: its names, its ranks and most of its words, however ordered
("the first man to walk on the moon" / "the first person who stepped on the moon").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from text_to_num import alpha2digit

from arena.problems import lexicon, regional, tagalog
from arena.problems.asks import CARDINAL, _normalised
from arena.problems.lexicon import kinds_of_one, thing

# Of the shorter clue's words, the share the other clue must hold (the same word, lemma,
# synonym or a word reading alike): below it the two ask about different things. Chosen on
# the three hand-written pools' riddles: every rewording there shares half or more.
CLUE_SHARED = 1 / 3

_STORY_AFTER_ORDINAL = frozenset("grade grader birthday anniversary child baby son daughter kid time".split())
_ORDINALS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth last 1st 2nd 3rd 4th 5th".split()
)
# What every riddle says around its fact: question words, the answer's kind ("the year",
# "the name"), how it is put on the product, and filler a rewording adds.
_SCAFFOLD = frozenset(
    """what whats which who whom whose where when how whichever whoever whatever one ones is are was were be
    been being did does do that this it its there they them their he she his her him the a an of in on to by
    for from with and or as at into onto year years name names number numbers title date print printed
    printing prints shape shaped like showing show shows feature featuring cover front design logo image
    text put has have had then find out figure again lol please pls get me buy want need would i id im
    famous known call called people nickname nicknamed also still just only very ever currently once some
    same whole numeral numerals digit digits""".split()
)
# Lower-case words inside a name.
_PARTICLES = frozenset("da de del della di van von der den du dos le la bin al".split())
# The kinds of answer a riddle asks for ("the number of players ..." / "the name of the team ...").
_KINDS = frozenset("year name number date title".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z'’.-]*[A-Za-z]|[A-Za-z]|\d+(?:\.\d+)?")
# The price a riddle's purchase is bounded by ("priced under ₱1,200", "below twelve hundred pesos",
# "for less than 1.5k") is no part of its fact: its amount is read as one number and its direction as
# one word, however written, so two wordings of one bound share them (the clue's share counts them).
_SPELT = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|and|a|half"
)
_MONEY = re.compile(
    r"(?:₱|\bphp\s?|\bp(?=\d))\s?\d[\d,]*(?:\.\d+)?\s?k?\b"
    r"|\b\d[\d,]*(?:\.\d+)?\s?k?\s?(?:pesos?|php)\b|\b\d+(?:\.\d+)?k\b"
    rf"|\b(?:(?:{_SPELT})[\s-]+)+(?:pesos?|php)\b",
    re.IGNORECASE,
)
_SET_FOOT = re.compile(
    r"\b(?:(?:set|sets|setting) foot|walk|walks|walked|walking|step|steps|stepped|stepping|land|lands|landing)(?= on\b)",
    re.IGNORECASE,
)
# Around an amount, one direction however said ("under", "below", "less than", "not above"), and the
# words that only say it is a price.
_PRICE_DIRECTION = {
    **dict.fromkeys("under below less cheaper within max maximum most".split(), "under"),
    **dict.fromkeys("over above more least minimum".split(), "over"),
}
_PRICE_WORDS = frozenset("than cost costs costing priced price prices budget pesos peso php spend".split())


# A direction turned around by "not" ("not more than ₱299" is under it).
_NOT_DIRECTION = re.compile(
    r"\b(?:not|no) (?:(more|higher|greater|over|above|pricier|costlier)|(less|lower|under|below|cheaper))\b",
    re.IGNORECASE,
)


def _amount(found: re.Match[str]) -> str:
    """A price as one number token ("₱1,200", "twelve hundred pesos" and "1.2k" alike: "1200"); a peso
    under a round amount is that amount ("not more than ₱299" bounds as "under ₱300" does)."""
    number = re.search(r"\d+(?:\.\d+)?", _normalised(found.group(0)))
    if not number:
        return found.group(0)
    value = float(number.group(0))
    rounded = round_amount(value)
    return f" {rounded:g} " if rounded != value else f" {number.group(0)} "


def round_amount(value: float) -> float:
    """The round amount a price a peso under it stands for ("not more than ₱299", "below 300"): only
    amounts of a hundred or more, as a size read as a bound ("size 9" / "size 10") is no peso off."""
    if value >= 99 and value.is_integer() and (value + 1) % 10 == 0:
        return value + 1
    return value


@dataclass(frozen=True, slots=True)
class Clue:
    """A riddle's clue: its content lemmas, its name runs and its ranks."""

    # Tuples, not sets: 100k problems are read at once (sets are built for the pairs compared).
    words: tuple[str, ...] = ()
    names: tuple[tuple[str, ...], ...] = ()  # runs of lower-cased name words, in order
    acronyms: tuple[str, ...] = ()  # all-capital words, lower-cased ("mj", "sea")
    ranks: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # the kind of answer asked: "the year", "the name", "the number"
    order: tuple[str, ...] = ()  # the content words (those of ``words``) in the order said, repeats dropped
    ours: bool = False  # says "our" ("our flag", "our national bird"): the shop's own country
    # Content words said only inflected, as (lemma, word said): "landed" may be a verb, which is no
    # thing the clue is about (asked only of the words a conflict turns on: a dictionary look-up each).
    inflected: tuple[tuple[str, str], ...] = ()


def read_clue(
    units: Sequence[str], lemma: Callable[[str], str], known: Callable[[str], bool], frame: frozenset[str]
) -> Clue:
    """The clue of a riddle's request sentences (its purchase still in: :func:`clue_conflict`
    removes both sides' purchase words)."""
    words: set[str] = set()
    order: list[str] = []
    names: list[tuple[str, ...]] = []
    acronyms: set[str] = set()
    ranks: set[str] = set()
    kinds: set[str] = set()
    inflected: dict[str, str] = {}
    said_as_is: set[str] = set()
    ours = False
    for unit in units:
        if _NUMBER_WORD.search(unit):  # "entry twenty-five" is "number 25"
            unit = _NUMBER_RUN.sub(lambda m: alpha2digit(m[0], "en"), unit)
        if " on " in unit:  # "the first person to set foot on the Moon", "to walk on" it: landed there
            unit = _SET_FOOT.sub("landed", unit)
        money = _MONEY.search(unit) is not None
        if money and ("not " in unit or "no " in unit):
            unit = _NOT_DIRECTION.sub(lambda m: "under" if m.group(1) else "over", unit)
        tokens = [t.replace("’", "'") for t in _WORD.findall(_MONEY.sub(_amount, unit) if money else unit)]
        ours = ours or any(t.lower() in _OUR for t in tokens)
        if _shouting(tokens):
            # A sentence typed in capitals ("WHITE MUG FOR KUYA IN CEBU, PRINTED W/ PI"): its capitals say
            # nothing of names; read it as a lower-case request (a name is a word no dictionary knows).
            tokens = [t.lower() for t in tokens]
        run: list[str] = []
        for k, token in enumerate(tokens):
            bare = re.sub(r"'s?$", "", token).rstrip(".")
            lower = bare.lower()
            # Chat laughter ("hehe patriotic") names nothing, nor does a ticket's label ("Req:", "Svc:").
            name = lower not in _LAUGHTER and lower not in LABELS and _is_name(bare, lower, k, tokens, known)
            if name:
                if bare.isupper() and len(bare) >= 2:
                    acronyms.add(lower)
                run.append(lower)
            elif run and lower in _PARTICLES and k + 1 < len(tokens) and tokens[k + 1][:1].isupper():
                run.append(lower)  # "Leonardo da Vinci", "Ludwig van Beethoven": one name
                continue
            elif run:
                names.append(tuple(run))
                run = []
            # "first-ever"; Tagalog's "ikalawang" is "second"
            ordinals = [p for p in tagalog.GLOSSARY.get(lower, lower).split("-") if p in _ORDINALS]
            # "First, ..." opens a list; "in second grade", "her third birthday" tell a story.
            story = k + 1 < len(tokens) and tokens[k + 1].lower() in _STORY_AFTER_ORDINAL
            if ordinals and not (k == 0 and len(tokens) > 1) and not story:
                ranks.update(o.replace("1st", "first").replace("2nd", "second") for o in ordinals)
                continue
            if lower.rstrip("s") in _KINDS:
                kinds.add(lower.rstrip("s"))
            if money and lower in _PRICE_DIRECTION:
                lower = _PRICE_DIRECTION[lower]
            for part in lower.replace("'", "").split("-"):
                if part and (part[0].isdigit() or (len(part) > 1 and part not in _SCAFFOLD)):
                    base = lemma(part) if part.isalpha() else part
                    if base not in _SCAFFOLD and base not in frame and not (money and base in _PRICE_WORDS):
                        if base not in words:
                            order.append(base)
                        words.add(base)
                        if part != base and part.isalpha():
                            inflected[base] = part
                        else:
                            said_as_is.add(base)
        if run:
            names.append(tuple(run))
    return Clue(
        tuple(sorted(words)),
        tuple(names),
        tuple(sorted(acronyms)),
        tuple(sorted(ranks)),
        tuple(sorted(kinds)),
        tuple(order),
        ours,
        tuple(sorted((base, word) for base, word in inflected.items() if base not in said_as_is)),
    )


# Temperature scales, named after people but read as units: a clue's "in Celsius" is no name, and
# another scale is another number.
_SCALES = frozenset({"celsius", "fahrenheit", "kelvin", "centigrade"})


_SIZE_LETTERS = frozenset({"xs", "xxs", "xl", "xxl", "xxxl", "2xl", "3xl", "4xl"})
_CONTRACTED = frozenset({"ll", "re", "ve", "d", "m", "t"})


def _shouting(tokens: Sequence[str]) -> bool:
    letters = [t for t in tokens if len(t) >= 2 and t[:1].isalpha()]
    return len(letters) >= 4 and sum(t.isupper() for t in letters) * 2 > len(letters)


def _is_name(bare: str, lower: str, k: int, tokens: Sequence[str], known: Callable[[str], bool]) -> bool:
    if not bare or not bare[0].isalpha() or lower in _SCAFFOLD or lower in _ORDINALS or lower.split("'")[0] == "i":
        return False
    if lower in regional.KIN:
        return False  # "for my Kuya in Cebu", "Apu": who it is for, not a name the clue asks about
    if "'" in lower and lower.rsplit("'", 1)[1] in _CONTRACTED:
        return False  # "He'll love it!", "They're"
    if bare == "May" and k > 0:
        return True  # the month: mid-sentence, English's "may" and Tagalog's "may" (has) are lower-case
    if lower in tagalog.FRAME or lower in tagalog.GLOSSARY:
        return False  # Taglish or Bisaya opening a sentence ("Itom. XL.", "Pinas"): a word, read as one
    if lower in _SCALES:
        return False  # "in Celsius": a unit, compared as a word ("Fahrenheit" is another)
    if len(bare) == 1 or lower in _SIZE_LETTERS:
        return False  # "size M", "an XL shirt": a size, not a name
    if re.fullmatch(r"[A-Z]-[a-z]+", bare):
        return False  # "T-shirt", "V-neck", "X-ray": a letter for a shape, a word
    if "-" in lower and all(known(part) or part in tagalog.AFFIXES for part in lower.split("-") if part):
        return False  # "Iron-on", "Pa-search", "Naka-print": words joined, no name
    if bare.isupper() and len(bare) >= 2:
        return True
    if bare[0].isupper():
        # A sentence's first word is capitalised anyway: a name only when the dictionary does
        # not know it ("Rizal's birth year") or a capitalised word follows ("Manny Pacquiao won").
        if k > 0:
            return True
        following = tokens[k + 1] if k + 1 < len(tokens) else ""
        follows = following[:1].isupper() and len(following) > 1 and following.lower() not in _SIZE_LETTERS
        return follows or not _a_word(lower, known)
    # Lower-case requests ("jimi hendrix", "popeye"): a word no dictionary knows; not in Taglish,
    # whose inflected Tagalog words no dictionary lists ("dineklara", "tinatawag", "ipaprint").
    if sum(t.lower() in tagalog.FUNCTION for t in tokens) >= 2:
        return False
    if lower.startswith("un") and known(lower[2:]):
        return False  # "unscented", "unframed": a word the dictionary knows, negated
    return len(lower) >= 4 and lower.isalpha() and not _a_word(lower, known)


def _a_word(lower: str, known: Callable[[str], bool]) -> bool:
    """A word the dictionary knows, or two of its nouns written as one ("birthstone")."""
    return known(lower) or lexicon.closed_compound(lower)


def clue_conflict(
    a: Clue,
    b: Clue,
    purchase: frozenset[str],
    alike: Callable[[str, str], bool],
    distinct: Callable[[str, str], bool],
) -> str | None:
    """Why two riddles (their answers unknown or not known to be one) ask another fact, or None.

    ``purchase`` is both sides' purchase words, left out of the clues; ``alike`` says whether two
    words are one word said another way (a respelling, a synonym, close meaning vectors);
    ``distinct`` whether two are two things even where one is a kind of the other."""
    if a.ranks and b.ranks and a.ranks != b.ranks:
        return f"rank {list(a.ranks)} / {list(b.ranks)}"
    # "the second largest planet" beside "the largest planet": a rank one side adds, other than the
    # first (which a rewording may leave to the superlative), is another place in the order. Not
    # "last": a story's "last month" is no rank.
    if bool(a.ranks) != bool(b.ranks) and set(a.ranks or b.ranks) - {"first", "last"}:
        return f"rank {list(a.ranks)} / {list(b.ranks)}"
    if a.kinds and b.kinds and not set(a.kinds) & set(b.kinds):
        return f"answer {list(a.kinds)} / {list(b.kinds)}"
    all_a, all_b = set(a.words), set(b.words)
    scales_a, scales_b = all_a & _SCALES, all_b & _SCALES
    if scales_a and scales_b and not scales_a & scales_b:
        return f"scale {sorted(scales_a)} / {sorted(scales_b)}"  # "in Celsius" / "in Fahrenheit": another number
    wa, wb = all_a - purchase, all_b - purchase
    only_a, only_b = _unshared(wa - wb, wb - wa, alike)
    names_a = [run for run in a.names if not _matched(run, a.acronyms, b, all_b)]
    names_b = [run for run in b.names if not _matched(run, b.acronyms, a, all_a)]
    # A name's words are not the clue's other content: those of a name the other side states
    # ("Michael Jordan" / "MJ") are shared, those of one it does not are the name, compared above.
    only_a -= {w for run in a.names for w in run}
    only_b -= {w for run in b.names for w in run}
    # A name replaced by another name ("the University of the Philippines" / "De La Salle
    # University") or by a thing ("the longest river in the Philippines" / "in the world"). A name
    # beside only descriptive words ("of the Philippines" / "our national flower, the small white
    # fragrant one") is the same thing described.
    things_a = sorted(w for w in only_a if thing(w) and not _acted(w, a))
    things_b = sorted(w for w in only_b if thing(w) and not _acted(w, b))
    # Against a name, only a thing the clue could be about: not a time span, a gift or a kin the story
    # left in the clue's words ("a gift for my son's birthday week").
    about_a = [w for w in things_a if w not in _STORY_THINGS and w not in _TERMS]
    about_b = [w for w in things_b if w not in _STORY_THINGS and w not in _TERMS]
    if names_a and (names_b or about_b):
        return f"clue names {names_a} / {names_b or about_b}"
    if names_b and about_a:
        return f"clue names {names_b} / {about_a}"
    # "our national bird" is the shop's own country's: against another country named, another fact
    # (not a town the parcel goes to: "Naga City" is no country WordNet knows first as a place).
    # An acronym is read here too ("the US flag"), which the other side states by no word.
    for mine, theirs, said in ((a, b, all_b), (b, a, all_a)):
        places = [
            run
            for run in mine.names
            if run[0] not in HOME and lexicon.place(run[0]) and not any(w in said for w in run)
        ]
        if places and theirs.ours and not mine.ours:
            return f"clue names {places} / ours"
    # A thing the clue is about replaced by another thing ("the speed of light" / "of sound"): one
    # noun left on each side that the lexicon knows as two things (a unit, "km/s" / "m/s", is not).
    if len(things_a) == 1 and len(things_b) == 1 and kinds_of_one(things_a[0], things_b[0]):
        return f"clue thing {things_a[0]!r} / {things_b[0]!r}"
    swapped = _swapped(a, b, purchase, alike, distinct)
    if swapped is not None:
        return f"clue swaps {swapped[0]} / {swapped[1]}"
    # What the fact is about besides its names (compared above): "the highest peak" / "the first
    # president", both "of the Philippines".
    plain_a = wa - _name_words(a.names)
    plain_b = wb - _name_words(b.names)
    smaller = min(len(plain_a), len(plain_b))
    if smaller >= 1:
        unshared = len(only_a & plain_a) if len(plain_a) <= len(plain_b) else len(only_b & plain_b)
        if smaller - unshared < CLUE_SHARED * smaller:
            return f"clue {sorted(plain_a)} / {sorted(plain_b)}"
    return None


def _acted(word: str, clue: Clue) -> bool:
    """``word`` said in the clue only as an inflected verb ("landed", "crewed", "fell"): an action."""
    return any(base == word and lexicon.verb_form(said) for base, said in clue.inflected)


_STORY_THINGS = frozenset("day week month age birthday gift son daughter mom dad".split())


# The most words on a side of a swap: "regular guitar" / "ukulele", "rays the sun" / "stars".
_SWAP_SPAN = 2
# Words of the purchase's terms and count, not of the fact: a riddle's clue as read_clue keeps it
# still holds them ("COD, below ₱150" / "cash on delivery, less than ₱150"; "a pack of pens" /
# "quantity = ..."), and the swap compares the fact alone (prices, being numbers, are left out too).
_TERMS = frozenset(
    """cod cash delivery deliver shipping ship free below under less over above max maximum min minimum budget
    price cost peso pesos php piso within than up kit pack set piece pcs pc quantity qty total only""".split()
)


def _swapped(
    a: Clue,
    b: Clue,
    purchase: frozenset[str],
    alike: Callable[[str, str], bool],
    distinct: Callable[[str, str], bool],
) -> tuple[list[str], list[str]] | None:
    """The spans two clues said alike around, when one thing is swapped for another: the same words
    before and after (two at least), and between them at most two words a side, a thing on each,
    none of one side a word of the other said another way ("the number of bones of an adult human" /
    "of teeth of an adult human"; "strings of a regular guitar" / "of a ukulele").

    A rewording reshapes the clue, so its words do not line up around one swap; a twin written from
    its source changes the one thing asked about. The things are compared as words, not as kinds
    (a tooth is a bone to WordNet, a ukulele a guitar): ``distinct`` says when two are two."""
    sa = [w for w in a.order if w not in purchase and w not in _TERMS and not w[0].isdigit()]
    sb = [w for w in b.order if w not in purchase and w not in _TERMS and not w[0].isdigit()]
    head = 0
    while head < min(len(sa), len(sb)) and sa[head] == sb[head]:
        head += 1
    tail = 0
    while tail < min(len(sa), len(sb)) - head and sa[-1 - tail] == sb[-1 - tail]:
        tail += 1
    span_a, span_b = sa[head : len(sa) - tail], sb[head : len(sb) - tail]
    # Two words around, not one: "the first man to walk on the moon" / "the first person who stepped
    # on the moon" line up around one word only, and are one fact.
    if head + tail < 2 or not (1 <= len(span_a) <= _SWAP_SPAN and 1 <= len(span_b) <= _SWAP_SPAN):
        return None
    if set(span_a + span_b) & set(a.acronyms + b.acronyms):
        return None  # "Southeast Asian" / "SEA": an acronym said out
    if any(alike(x, y) and not distinct(x, y) for x in span_a for y in span_b):
        return None
    if not any(distinct(x, y) for x in span_a for y in span_b):
        return None
    return span_a, span_b


def _name_words(names: Sequence[tuple[str, ...]]) -> set[str]:
    """A name's words as written and as lemmas ("bulls" and "bull")."""
    words = {w for run in names for w in run}
    return words | {w[:-1] for w in words if w.endswith("s")}


def _unshared(only_a: set[str], only_b: set[str], alike: Callable[[str, str], bool]) -> tuple[set[str], set[str]]:
    """The words left on each side once pairs of words said another way are matched (greedy, sorted)."""
    left_b = set(only_b)
    left_a: set[str] = set()
    for word in sorted(only_a):
        match = next((other for other in sorted(left_b) if alike(word, other)), None)
        if match is None:
            left_a.add(word)
        else:
            left_b.discard(match)
    return left_a, left_b


# A cardinal said in words, one or more ("twenty-five", "one hundred thirty-three"); text2num leaves
# a lone "one" or "two" a word, as no count.
_NUMBER_WORD = re.compile(CARDINAL, re.IGNORECASE)
_NUMBER_RUN = re.compile(rf"\b{CARDINAL}(?:[ -](?:and )?{CARDINAL})*\b", re.IGNORECASE)
_LAUGHTER = frozenset("haha hahaha hehe hehehe hihi huhu lol charot".split())
# A support ticket's field labels and what it says of its customer: "TKT: ...", "Req: Nike running shoes;
# Budget: <₱4,500; Svc: COD; Qty: 2", "Customer wants ...", "Cust pref: white" (the request's frame).
LABELS = frozenset("req reqs tkt ticket svc svcs qty cust customer customers pref prefs remarks".split())
# The shop's own country, which "our" names ("our flag" / "the Philippine flag"; Tagalog's "natin", "ating",
# Cebuano's "nato", "atong": "ang pambansang bulaklak natin").
HOME = frozenset("philippine philippines ph pinas pilipinas filipino pinoy".split())
_OUR = frozenset("our natin ating atin nato atong".split())


def _matched(run: tuple[str, ...], own_acronyms: tuple[str, ...], other: Clue, other_words: set[str]) -> bool:
    """A name run the other clue states: any of its words (or a one-letter respelling), its
    initials as the other's acronym, or an acronym itself (whose expansion is not known)."""
    from rapidfuzz.distance import OSA

    if len(run) == 1 and run[0] in own_acronyms:
        return True  # an acronym alone: its expansion is not known ("SEA Games" / "Southeast Asian Games")
    if other.ours and all(w in HOME for w in run):
        return True  # "the Philippines" / "our national flower"
    said = other_words | {w for r in other.names for w in r}
    said |= {tagalog.GLOSSARY[w] for w in said if w in tagalog.GLOSSARY}  # "Espanya" says "Spain"
    # A name is said by its own words: "De La Salle University" is not said by "university" alone
    # ("the University of the Philippines"); a name of common words only is said by any of them.
    own = [w for w in run if not lexicon.known(w.replace("'", "").replace("-", ""))]
    common = [w for w in run if w not in own]
    if len(common) >= 2 and all(w in said for w in common):
        return True  # "the World Cup" says "the FIFA World Cup": the name with a word left out
    for word in own or run:
        plain = word.replace("'", "").replace("-", "")
        plain = tagalog.GLOSSARY.get(plain, plain)  # "Pilipinas" is "the Philippines"
        if word in said or plain in said:
            return True
        if any(len(w) >= 5 and len(plain) >= 5 and OSA.distance(plain, w) <= 1 for w in said):
            return True
    # A one-word name said by a form derived from it: "Filipino" / "the Philippines", "Spanish" /
    # "Spain", "the Americans" / "America" (WordNet's pertainym and derivation links; a people's plural
    # is read as its adjective, which the links tie to the place).
    one = tagalog.GLOSSARY.get(run[0], run[0]) if len(run) == 1 else ""
    if one and lexicon.known(one):
        forms = {f for w in said if w.isalpha() for f in (w, w[:-1] if w.endswith("s") else w)}
        if any(lexicon.relation(one, f) == "same" for f in forms):
            return True
    initials = "".join(w[0] for w in run)
    return any(len(acr) >= 2 and (acr.startswith(initials) or initials.startswith(acr)) for acr in other.acronyms)
