"""Cebuano (Bisaya) as shoppers from the Visayas and Mindanao mix it into English: the function words,
the words that frame and ask, a glossary of common content words, numerals and price bounds.

Cebuano is the Philippines' second language by speakers, and a marketplace's chat reads like "gusto
nako og stand fan nga puti, ubos sa 1,500 ra palihug". Like Tagalog (:mod:`arena.problems.tagalog`,
which folds these tables into its own), neither the meaning model nor WordNet reads it. Every entry is
from general knowledge of the language, not from any labelled pool. Words that are also English
words a request uses ("man", "pod", "sad", "mi") are left out: "AirPods" or "Mi Band" must stay names.
"""

from __future__ import annotations

import re

# Case markers, linkers, pronouns, particles, demonstratives, question words.
FUNCTION = frozenset(
    "og ug nga ni kay nako akong imo imong nimo namo nato kita ninyo inyong ra gyud jud gud diay unta pud "
    "usab kaayo lagi baya kini kana kadto niini niana diri dinhi didto adto naa anaa naay wala dili mao maoy "
    "unsa unsay asa pila kinsa ngano unya dayon kon inig".split()
)
# Besides those, the words that frame an ask ("I want", "please", "look for", "buy", "is there").
FRAME = FUNCTION | frozenset(
    "gusto palihug pls kinahanglan nangita mangita pangita pangitaa pangitaon gipangita palit mopalit mamalit "
    "paliton palita gipalit bay tanan usa ka basin tungod alang tabang tabangi salamat daghang kolor gidak-on "
    "kwarta kuwarta bayad gamiton gamit magamit ipa-print pa-print ipa-engrave pareha parehas sama "
    # "naa koy" (I have), "mag-"/"ma-" (verb prefixes split off), "sulod sa" (within), "maayo" (good)
    "koy ko mag ma sulod maayo "
    # story words of a chat's small talk ("guba na akong electric fan": my fan broke)
    "guba init".split()
)
# A Cebuano sentence that asks ("gusto nako og ...", "kinahanglan nako ...", "naa bay ...").
ASKS = (
    r"gusto (?:nako|ko|ko og)|kinahanglan|nangita|mangita|pangita\w*|gipangita|mopalit|mamalit|paliton|"
    r"palita|naa (?:ba|bay)|palihug"
)

# Cebuano content word -> its English word.
GLOSSARY: dict[str, str] = {
    # things
    "sinina": "shirt", "sanina": "shirt", "karsones": "pants", "kalo": "hat", "unlan": "pillow",
    "habol": "blanket", "lingkuranan": "chair", "katre": "bed", "higdaanan": "bed", "suga": "lamp",
    "kandila": "candle", "kalan": "stove", "panaksan": "bowl", "botelya": "bottle", "silhig": "broom",
    "balde": "bucket", "tualya": "towel", "kwaderno": "notebook", "kwintas": "necklace", "ariyos": "earring",
    "dulaan": "toy", "iro": "dog", "iring": "cat", "bugas": "rice", "kan-on": "rice", "asukar": "sugar",
    "utanon": "vegetable", "sudlanan": "container", "tawo": "person", "bulan": "month", "bestida": "dress", "panlaba": "laundry",
    # qualities and values
    "itom": "black", "itum": "black", "lunhaw": "green", "dalag": "yellow", "abohon": "gray", "gamay": "small",
    "dako": "big", "barato": "cheap", "bag-o": "new", "babaye": "woman", "pang-bata": "kid",
    "kabaga": "thick", "baga": "thick",
    # what riddles ask about
    "kalibutan": "world", "nasud": "country", "nasod": "country", "siyudad": "city", "dakbayan": "city",
    "bukid": "mountain", "suba": "river", "lanaw": "lake", "tuig": "year", "ngalan": "name",
    "misulat": "write", "nagsulat": "write", "gisulat": "write", "magsusulat": "author", "numero": "number",
    "kadaghan": "number", "mananap": "animal", "bulak": "flower", "bandera": "flag",
    "pinakataas": "high", "pinakadako": "big", "nasudnong": "national", "natawo": "born",
    "pagkatawo": "born", "planeta": "planet", "kanta": "song",
    # buying
    "tindahan": "shop", "mahal": "expensive",
}  # fmt: skip

# Numerals: Cebuano's own ("lima ka gatos", 500; "duha ka libo", 2,000: "ka" links a count to what it
# counts) and the Spanish ones prices are often said in ("singko mil", 5,000; "kinyentos", 500).
UNITS = {
    "usa": 1, "duha": 2, "tulo": 3, "upat": 4, "unom": 6,
    "uno": 1, "dos": 2, "tres": 3, "kwatro": 4, "kuwatro": 4, "singko": 5, "sais": 6, "sayis": 6,
    "siyete": 7, "syete": 7, "otso": 8, "nuybe": 9, "nuwebe": 9,
}  # fmt: skip
TENS = {
    "napulo": 10, "diyes": 10, "beynte": 20, "baynte": 20, "trenta": 30, "traynta": 30, "kwarenta": 40,
    "singkwenta": 50, "sisenta": 60, "setenta": 70, "otsenta": 80, "nobenta": 90,
}  # fmt: skip
# Spanish teens as Tagalog and Cebuano spell them ("kinse pesos", "alas-onse"; "dose" is left out: a dose)
WHOLE = {"kinyentos": 500, "onse": 11, "trese": 13, "katorse": 14, "kinse": 15}
HUNDRED = ("gatos", "siyentos", "syentos")
# A multiplier that never starts a number: "6 mil" is a thickness, "dos mil" is 2,000.
THOUSAND_AFTER = ("mil",)
LINKERS = ("ka", "ug")

# Price bounds, as English words the price reader knows: "ubos sa 800" (below), "dili molapas sa 1k" (not
# over), "hangtod 4,500" (up to), "wala pa 1k" (not yet 1k: under), "labaw sa 2k" (over).
BOUNDS = (
    (re.compile(r"\b(?:dili|di) (?:mo)?ubos (?:sa|og)\b"), "at least"),
    (re.compile(r"\b(?:dili|di) (?:mo)?(?:lapas|labaw|sobra) (?:sa|og)\b"), "up to"),
    (re.compile(r"\bubos (?:sa|og)\b|\bubos\b(?= ?(?:₱|php|p)?\s?\d)"), "under"),
    (re.compile(r"\bwala (?:pa|pay|pa sa)\b(?= ?(?:₱|php|p)?\s?\d)"), "under"),
    (re.compile(r"\b(?:hangtod|hantod|kutob) (?:sa )?"), "up to "),
    (re.compile(r"\b(?:labaw|lapas|kapin|sobra) (?:sa|og)\b"), "over"),
    (re.compile(r"\bpaubos\b"), "or less"),
)
BOUND_CUE = (
    "ubos", "lapas", "labaw", "sobra", "moubos", "molapas", "molabaw", "mosobra", "wala pa", "hangtod", "hantod",
    "kutob", "kapin", "paubos",
)  # fmt: skip
