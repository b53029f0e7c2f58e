"""Tagalog as Taglish shoppers write it: the function words that frame a request or carry small
talk, the words that ask, and a glossary of the content words a shopping request or a riddle uses
most, each read as its English word.

Why a table of our own: Taglish (Tagalog and English in one sentence) is how many shoppers on a
Philippine marketplace write ("Hanap ako ng powerbank na 20,000 mAh", "pa-order ng libro na sinulat
ng author ng Florante at Laura"), and neither the meaning model (all-MiniLM-L6-v2, English) nor
WordNet reads Tagalog: "kawali" and "frying pan" are unrelated to both. The glossary lists common
words from general knowledge of the language, not from any labelled pool; a word missing from it is
read as it is written (the guard then compares it as an unknown word, never as a brand: see
``twins._a_word``, which asks simplemma's Tagalog dictionary).

Cebuano (Bisaya), the other language shoppers mix in, has its tables in :mod:`arena.problems.cebuano`;
every table exported here holds both, so each reader of Taglish reads Bisaya English too.
"""

from __future__ import annotations

import re

from arena.problems import cebuano, chavacano, regional
from arena.problems.patterns import alternation

# Function words: articles, case markers, pronouns, particles, linkers.
FUNCTION = (
    frozenset(
        "ang ng sa po opo ako ko mo namin natin kami tayo kayo siya sila yung mga kasi naman talaga din rin ba nga "
        "ngayon na pa lang daw raw ito iyan yan dito diyan doon sobra sobrang".split()
    )
    | cebuano.FUNCTION
    | chavacano.FUNCTION
)
# Besides those, the words that frame an ask, as English's "find", "please", "a", "for" do.
FRAME = (
    FUNCTION
    | frozenset(
        "isa isang iisang iisa para basta dapat gusto kailangan hanap hanapin hinahanap naghahanap bili bibili bumili bilhin pabili "
        "bilhan paki pakihanap meron mayroon mayroong may pero kung ni si kay nang yun iyon ung nung niya nila tsaka saka tapos "
        "muna lahat bawat yun ganun ganoon pang pa-order order mag-order "
        # asking, using and buying in their other forms, places and times of the story, labels
        "pano paano magagamit gamitin gagamitin bibilhin pataas saan nung nun dun hindi sana kayong tas galing "
        "kulay pera pwede puwede sabay ano anong ilan ilang kasama kasamang lamang naka sanang inyo akoy walang "
        "kaya mag ma".split()
    )
    | cebuano.FRAME
    | chavacano.FRAME
    | regional.FRAME
    # Formal Tagalog: "Nais kong bumili ng ...", "Mangyaring hanapan ako ng ...", "ang halaga ay ₱600",
    # "nakalimbag ang ...", "katumbas ng bilang ng ...", a value's labels ("sukat", "uri", "tatak")
    | frozenset(
        "nais naisin ninanais kong mangyaring hanapan ibig aking akin amin aming ating atin iyong inyong "
        "kanyang ninyo sana nang iyon halaga nakalimbag limbag ilimbag katumbas sukat uri tatak "
        "magandang umaga gabi tanghali maraming munting"
        # "ang number ay ...": the linker; "nakasulat" (written on it)
        " ay nakasulat".split()
    )
)
# A Tagalog sentence that asks ("Hanap ako ng ...", "Kailangan ko ng ...", "Meron ba ...").
ASKS = re.compile(
    r"\b(?:hanap\w*|hinahanap|naghahanap|kailangan|gusto|bili|bibili|bumili|bilhin|bibilhin|bilhan|pabili|pa-order|"
    rf"paki\w*|meron ba|may .* ba|nais|mangyaring|hanapan|{cebuano.ASKS}|{regional.ASKS}|{chavacano.ASKS})\b",
    re.IGNORECASE,
)
# Prefixes a hyphen joins to a word ("pa-search", "naka-print", "pang-laptop", "mag-order").
AFFIXES = frozenset("pa naka pang pam pan mag nag ipa i ika ka maka makapag pag".split())
# Verb and adjective prefixes, longest first: "tinatawag" is t-in-a-tawag, "napapatong" na-pa-patong.
_PREFIXES = tuple(
    sorted(
        "nakaka naka napa nagpa magpa pinaka ipina ipa ika maka makapag nag mag pag na ma pa ka i".split(),
        key=len,
        reverse=True,
    )
)
_VOWELS = frozenset("aeiou")


def roots(word: str) -> set[str]:
    """The forms ``word`` may be an inflection of: prefixes, the infixes -in- and -um- after the first
    consonant, a repeated first syllable ("tatawag": the aspect's reduplication) and the suffixes -in,
    -an, -hin, -han taken off in turn (up to three), none shorter than four letters. Where simplemma's
    Tagalog list lacks an inflected verb ("tinatawag", "napapatong"), its root is there."""
    found = {word}
    frontier = {word}
    for _ in range(3):
        step: set[str] = set()
        for w in frontier:
            step.update(w[len(p) :] for p in _PREFIXES if w.startswith(p))
            if len(w) > 3 and w[0] not in _VOWELS and w[1:3] in ("in", "um"):
                step.add(w[0] + w[3:])
            if len(w) > 4 and w[:2] == w[2:4] and w[1] in _VOWELS:
                step.add(w[2:])
            step.update(w[: -len(x)] for x in ("hin", "han", "in", "an") if w.endswith(x))
        frontier = {w for w in step if len(w) >= 4} - found
        found |= frontier
    return found - {word}


# Words that join a story to the ask in one sentence: "..., kaya naghahanap ako ng blender".
STORY_JOINS = ("kaya", "so")

# Tagalog content word -> its English word (the English word is then read as English is: lemma,
# synonym group, class value, WordNet).
GLOSSARY: dict[str, str] = {
    # things
    "libro": "book", "aklat": "book", "lapis": "pencil", "papel": "paper", "kuwaderno": "notebook",
    "kawali": "pan", "sandok": "ladle", "kaldero": "pot", "kaserola": "pot", "baso": "glass", "tasa": "cup",
    "plato": "plate", "mangkok": "bowl", "kutsara": "spoon", "tinidor": "fork", "kutsilyo": "knife",
    "bote": "bottle", "sapatos": "shoe", "tsinelas": "slipper", "damit": "clothes", "pantalon": "pants",
    "palda": "skirt", "medyas": "sock", "sombrero": "hat", "payong": "umbrella", "relo": "watch",
    "unan": "pillow", "kumot": "blanket", "banig": "mat", "upuan": "chair", "silya": "chair", "mesa": "table",
    "lamesa": "table", "kama": "bed", "ilaw": "light", "bentilador": "fan", "laruan": "toy", "bola": "ball",
    "pabango": "perfume", "sabon": "soap", "suklay": "comb", "tuwalya": "towel", "walis": "broom",
    "timba": "bucket", "kurtina": "curtain", "salamin": "glass", "susi": "key", "pitaka": "wallet",
    "bag": "bag", "plantsa": "iron", "kuwintas": "necklace", "singsing": "ring", "hikaw": "earring", "larawan": "picture",
    # animals (what pet supplies are for)
    "pusa": "cat", "aso": "dog", "kuneho": "rabbit",
    # food
    "bigas": "rice", "kanin": "rice", "asukal": "sugar", "asin": "salt", "suka": "vinegar", "toyo": "soy",
    "mantika": "oil", "itlog": "egg", "gatas": "milk", "tinapay": "bread", "kape": "coffee", "tubig": "water",
    "prutas": "fruit", "gulay": "vegetable", "isda": "fish", "manok": "chicken", "baboy": "pork", "karne": "meat",
    "tsokolate": "chocolate", "pulot": "honey", "harina": "flour", "mani": "peanut", "mangga": "mango",
    "sardinas": "sardine", "lata": "can",
    # qualities and values
    "pula": "red", "puti": "white", "itim": "black", "asul": "blue", "berde": "green", "dilaw": "yellow",
    "kahel": "orange", "lila": "purple", "kahoy": "wood", "bakal": "steel", "plastik": "plastic",
    "tela": "fabric", "katad": "leather", "maliit": "small", "malaki": "big", "mura": "cheap",
    "bago": "new", "luma": "old", "lalaki": "man", "panlalaki": "man", "babae": "woman", "pambabae": "woman",
    "bata": "kid", "pambata": "kid", "sanggol": "baby", "pang-baby": "baby", "mabango": "fragrant",
    # what riddles ask about (a superlative as its English lemma: "largest" reads "big", so "pinakamalaki" does)
    "mundo": "world", "daigdig": "world", "bansa": "country", "lungsod": "city", "lalawigan": "province",
    "probinsya": "province", "bundok": "mountain", "bulkan": "volcano", "ilog": "river", "isla": "island",
    "pulo": "island", "dagat": "sea", "lawa": "lake", "taon": "year", "bayani": "hero", "pangulo": "president",
    "presidente": "president", "pangalan": "name", "sumulat": "write", "isinulat": "write", "sinulat": "write",
    "manunulat": "author", "nanalo": "win", "bilang": "number", "hayop": "animal", "ibon": "bird",
    "bulaklak": "flower", "puno": "tree", "watawat": "flag", "bandila": "flag", "pinakamataas": "high",
    "pinakamalaki": "big", "pinakamahaba": "long", "karagatan": "ocean", "pambansang": "national", "pambansa": "national",
    "pilipinas": "philippines", "pinas": "philippines",
    # other countries as Tagalog spells them ("kalayaan mula sa Espanya": independence from Spain)
    "espanya": "spain", "amerika": "america", "tsina": "china", "inglatera": "england",
    "pransya": "france", "alemanya": "germany", "italya": "italy", "rusya": "russia", "ehipto": "egypt",
    "gresya": "greece", "mehiko": "mexico", "olanda": "netherlands",
    "buwan": "month", "anak": "kid", "tao": "person", "hugis": "shape", "unang": "first", "una": "first",
    "ikalawa": "second", "ikalawang": "second", "ikatlo": "third", "ikatlong": "third", "ikaapat": "fourth",
    "ikalima": "fifth", "ikalimang": "fifth", "pangalawa": "second", "pangalawang": "second", "pangatlo": "third",
    "pangatlong": "third",
    # what riddles count (the number of strings, days, rays, cards, letters, bones)
    # (Words of two common meanings are left out: paa, foot or leg; letra, letter or lyrics; gulong, wheel
    # or tire; read as one, they would veto the other. "araw" (day; also the sun) and "oras" (hour; also
    # time) are kept: counting riddles ask days in a week and hours in a day, and pools 10, 11 and 17
    # lost recall without them.)
    "kwerdas": "string", "kuwerdas": "string", "gitara": "guitar", "araw": "day", "oras": "hour",
    "linggo": "week", "minuto": "minute",
    "sinag": "ray", "bituin": "star", "planeta": "planet", "baraha": "card", "titik": "letter",
    "alpabeto": "alphabet", "kapanganakan": "birth", "ipinanganak": "born", "buto": "bone", "ngipin": "tooth",
    "daliri": "finger", "binti": "leg", "manlalaro": "player", "koponan": "team", "liga": "league",
    "ordinaryo": "ordinary", "burda": "embroider", "nakaburda": "embroider",
    # a small business's supplies (stalls, eateries, salons, tricycles)
    "busina": "horn", "timbangan": "scale", "kuryente": "electric", "kapa": "cape",
    "pwesto": "stall", "puwesto": "stall", "takip": "lid", "buhok": "hair", "gupit": "haircut", "kahon": "box",
    "pintura": "paint", "karinderya": "eatery", "carinderia": "eatery", "karinderia": "eatery", "panaderya": "bakery", "kalan": "stove", "hurno": "oven",
    "gunting": "scissors", "lubid": "rope", "pako": "nail", "martilyo": "hammer", "pader": "wall",
    # buying
    "presyo": "price", "libre": "free", "regalo": "gift", "tindahan": "shop",
}  # fmt: skip
# Adjectives riddles rank by, and their superlatives ("pinakamaliit na planeta", "pinakamalaking isla"):
# the superlative reads as its adjective, as "largest" reads as "large".
_RANKED = {
    "maliit": "small", "malaki": "big", "mataas": "high", "mababa": "low", "mahaba": "long", "maikli": "short",
    "malalim": "deep", "malapit": "near", "malayo": "far", "matanda": "old", "mabilis": "fast",
    "mabagal": "slow", "mainit": "hot", "malamig": "cold", "mabigat": "heavy", "malawak": "wide",
}  # fmt: skip
for _root, _english in _RANKED.items():
    for _form in (_root, f"pinaka{_root}", f"pinaka{_root}ng"):
        GLOSSARY.setdefault(_form, _english)
GLOSSARY.update(cebuano.GLOSSARY)
# Formal Tagalog's own words for colours, metals and sizes ("bughaw", "kayumanggi", "katamtamang sukat").
GLOSSARY.update(
    {
        "bughaw": "blue", "luntian": "green", "lunti": "green", "kayumanggi": "brown", "abuhin": "gray",
        "rosas": "pink", "ginto": "gold", "pilak": "silver", "katamtaman": "medium", "katamtamang": "medium",
        "pantakbo": "running", "pambasketbol": "basketball", "onsa": "ounce", "asero": "steel", "sapin": "sheet",
        "balat": "leather", "badyet": "budget",
    }
)  # fmt: skip
for _word, _english in chavacano.GLOSSARY.items():
    GLOSSARY.setdefault(_word, _english)
for _word, _english in regional.GLOSSARY.items():
    GLOSSARY.setdefault(_word, _english)


# Tagalog numerals, as Taglish writes prices and counts: "siyam na raang piso" (900 pesos), "apat na
# raan at limampung piso" (450), "isang libo" (1,000), "dalawampu't lima" (25), "labing-dalawa" (12).
# A number word takes the linker "-ng" or "na" before what it counts or multiplies; "at" ("'t") joins
# the parts of one number.
_UNITS = {"isa": 1, "dalawa": 2, "tatlo": 3, "apat": 4, "lima": 5, "anim": 6, "pito": 7, "walo": 8, "siyam": 9}
_UNITS.update(cebuano.UNITS)
_UNITS.update(regional.UNITS)
_UNITS.update(chavacano.UNITS)
TENS = {
    "sampu": 10, "dalawampu": 20, "tatlumpu": 30, "apatnapu": 40, "limampu": 50, "animnapu": 60,
    "pitumpu": 70, "walumpu": 80, "siyamnapu": 90,
}  # fmt: skip
TENS.update(cebuano.TENS)
TENS.update(chavacano.TENS)
_WHOLE = {"sandaan": 100, "sanlibo": 1000}  # one hundred, one thousand: multipliers of an implied one
_HUNDRED = ("daan", "raan", *cebuano.HUNDRED)
# What links the parts of one number when a number part follows: Tagalog "na", "at"; Cebuano "ka", "ug".
_LINKERS = ("na", "at", *cebuano.LINKERS, *regional.LINKERS, *chavacano.LINKERS)
_SPANISH_UNITS = frozenset(w for w in cebuano.UNITS if w not in ("usa", "duha", "tulo", "upat", "unom")) | set(
    chavacano.UNITS
)
_SPANISH_TENS = frozenset(w for w, n in (cebuano.TENS | chavacano.TENS).items() if n >= 20)
_TEEN = re.compile(r"^labin[g-]?-?(isa|dalawa|tatlo|apat|lima|anim|pito|walo|siyam)$")
_NUMERAL_TOKEN = re.compile(r"[a-z][a-z'-]*|[^a-z]+")
# The currency and the count's unit, in the English words the readers know.
_UNIT_WORDS = re.compile(r"\b(?:(piso)|(pirasong|piraso))\b")


def _numeral(token: str) -> tuple[str, int] | None:
    """(kind, value) of one token: a number ("num"), a multiplier ("mul"), or None."""
    word = token.removesuffix("'t")  # "dalawampu't": "dalawampu at"
    for form in (word, word.removesuffix("ng"), word.removesuffix("g")):
        if form in _UNITS or form in TENS:
            return "num", _UNITS.get(form) or TENS[form]
        if form in _WHOLE:
            return "mul", _WHOLE[form]
        if form in cebuano.WHOLE:
            return "num", cebuano.WHOLE[form]
        if form in chavacano.WHOLE:
            return "num", chavacano.WHOLE[form]
        if form in _HUNDRED:
            return "mul", 100
        if form == "libo" or form in cebuano.THOUSAND_AFTER:
            return "mul", 1000
        teen = _TEEN.match(form)
        if teen:
            return "num", 10 + _UNITS[teen.group(1)]
    return None


# A price that opens with "mil" says its hundreds after it: "mil kinyentos" and "mil singko" are 1,500,
# "mil dos" 1,200 (Visayan price talk; "dos mil" is 2,000 and "6 mil" a thickness, both left to the reader).
# Chavacano says its hundreds whole after it ("mil doscientos", 1,200), and "mil pesos" is a thousand.
_HUNDREDS_AFTER_MIL = {"kinyentos": 500, **{w: n for w, n in chavacano.WHOLE.items() if n >= 100}}
_MIL_FIRST = re.compile(
    r"\bmil (?:("
    + "|".join([*_HUNDREDS_AFTER_MIL, *(w for w, n in cebuano.UNITS.items() if n > 1)])
    + r")(?: (?:siyentos|syentos))?\b|(?=pesos?\b|piso\b))"
)


def _mil_first(found: re.Match[str]) -> str:
    before = found.string[: found.start()].split()[-1:]
    if before and (before[0][0].isdigit() or _numeral(before[0]) is not None):
        return found.group(0)
    hundreds = found.group(1)
    if hundreds is None:  # "mil pesos"
        return "1000 "
    return str(1000 + _HUNDREDS_AFTER_MIL.get(hundreds, cebuano.UNITS.get(hundreds, 0) * 100))


def numerals(text: str) -> str:
    """``text`` (lower-cased) with its Tagalog numbers as digits and "piso" as "pesos". A lone "isa" /
    "isang" is left as it is ("isang shop" is "one shop", no count), as English's "one" is."""
    if "piso" in text or "piraso" in text:
        text = _UNIT_WORDS.sub(lambda m: "pesos" if m.group(1) else "pieces", text)
    if "mil " in text:
        text = _MIL_FIRST.sub(_mil_first, text)
    tokens = _NUMERAL_TOKEN.findall(text)
    taglish = any(token in FUNCTION for token in tokens)
    out: list[str] = []
    k = 0
    while k < len(tokens):
        found = _numeral(tokens[k])
        if found is None or tokens[k] in cebuano.THOUSAND_AFTER:
            out.append(tokens[k])
            k += 1
            continue
        total, current, parts, end = 0, 0, 0, k
        spanish_unit = False  # the last part was a Spanish unit with no linker after it
        j = k
        while j < len(tokens):
            token = tokens[j]
            if token.isspace():
                j += 1
                continue
            read = _numeral(token)
            if read is None:
                # A linker joins the parts of one number only when a number part follows.
                if token in _LINKERS and parts:
                    following = next((t for t in tokens[j + 1 :] if not t.isspace()), "")
                    if _numeral(following) is not None:
                        spanish_unit = False
                        j += 1
                        continue
                break
            kind, value = read
            if spanish_unit and token in _SPANISH_TENS:
                # A price said as Visayan shops say it: "dos singkwenta" is 250, "tres nobenta" 390.
                current = current - current % 10 + (current % 10) * 100 + value
                spanish_unit = False
                parts += 1
                end = j + 1
                j += 1
                continue
            spanish_unit = kind == "num" and token in _SPANISH_UNITS
            if kind == "mul":
                if value == 1000:
                    total += (current or 1) * 1000
                    current = 0
                else:
                    current = (current or 1) * 100
            else:
                current += value
            parts += 1
            end = j + 1
            j += 1
        value = total + current
        single_one = parts == 1 and _numeral(tokens[k]) == ("num", 1)
        # A bare word alone reads as a number only in a Tagalog sentence: "lima beans" is a bean.
        bare = parts == 1 and tokens[k] in _UNITS and not taglish
        if parts == 0 or single_one or bare:
            out.append(tokens[k])
            k += 1
            continue
        out.append(str(value))
        k = end
    return "".join(out)


# Tagalog price bounds, as English words the price reader knows: "hanggang 250" (up to), "mas mababa
# sa ₱1,800" (less than), "hindi lalagpas ng 900" (not over), "500 pataas" (or more).
_BOUNDS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "hindi bababa sa 2k": not lower than, so at least (before "mababa" below, another stem)
    (re.compile(r"\b(?:hindi|di) (?:bababa|baba) (?:sa|ng|nang)\b"), "at least"),
    (re.compile(r"\b(?:hanggang|hangang)\b"), "up to"),
    (
        re.compile(
            r"\b(?:mas mababa|mas mura|kulang|hindi hihigit|di hihigit|hindi lalagpas|di lalagpas|"
            r"hindi lalampas|di lalampas|hindi aabot|di aabot|hindi pa umaabot|di pa umaabot)(?: pa)? (?:sa|ng|nang)\b"
        ),
        "under",
    ),
    (re.compile(r"\b(?:hindi aabot|di aabot)\b"), "under"),
    # "wag lalagpas ng isang libo", "huwag lalampas 500": do not go past; "wala pang ₱400": not yet ₱400
    (re.compile(r"\b(?:wag|huwag) (?:lalagpas|lalampas|lumagpas|lumampas)(?: (?:sa|ng|nang))?\b"), "under"),
    (re.compile(r"\bwala pa(?:ng| sa)\b"), "under"),
    (re.compile(r"\bpababa\b"), "or less"),
    # Formal: "₱600 o mas mababa pa" (or less), "₱600 ang pinakamataas" (at most)
    (re.compile(r"\bo mas mababa(?: pa)?\b"), "or less"),
    (re.compile(r"(?<=\d) ang pinakamataas\b"), " max"),
    (re.compile(r"\bpataas\b"), "or more"),
    # "mahigit ₱1,500", "lampas sa 2k": more than (after the negated forms above, "hindi lalampas")
    (re.compile(r"\b(?:mahigit|higit|lampas|lagpas)(?: (?:sa|ng|nang))?(?=\s*(?:₱|php|p)?\s*\d)"), "over"),
    (re.compile(r"\bpor?s(?:i?y)?ento\b"), "percent"),  # "kinse porsyento"
)
_BOUNDS += regional.BOUNDS + cebuano.BOUNDS + chavacano.BOUNDS  # "indi magsobra sa" before Cebuano's "sobra sa"
BOUND_CUE = re.compile(
    r"\b"
    + alternation(
        (
            *"hanggang hangang mababa bababa baba mura kulang hihigit lalagpas lalampas lumagpas lumampas aabot".split(),
            *"umaabot pababa pataas pinakamataas porsyento porsiyento porsento mahigit higit lampas lagpas".split(),
            *("wala pang", "wala pa sa", "mas mababa"),
            *cebuano.BOUND_CUE,
            *regional.BOUND_CUE,
            *chavacano.BOUND_CUE,
        )
    )
    + r"\b"
)


def bounds(text: str) -> str:
    """``text`` (lower-cased) with its Tagalog price bounds in English words."""
    for pattern, english in _BOUNDS:
        text = pattern.sub(english, text)
    return text
