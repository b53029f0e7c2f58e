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
"""

from __future__ import annotations

import re

# Function words: articles, case markers, pronouns, particles, linkers.
FUNCTION = frozenset(
    "ang ng sa po opo ako ko mo namin natin kami tayo kayo siya sila yung mga kasi naman talaga din rin ba nga "
    "ngayon na pa lang daw raw ito iyan yan dito diyan doon sobra sobrang".split()
)
# Besides those, the words that frame an ask, as English's "find", "please", "a", "for" do.
FRAME = FUNCTION | frozenset(
    "isang para basta dapat gusto kailangan hanap hanapin hinahanap naghahanap bili bibili bumili bilhin pabili "
    "bilhan paki pakihanap meron may pero kung ni si kay nang yun iyon ung nung niya nila tsaka saka tapos "
    "muna lahat bawat yun ganun ganoon pang pa-order order mag-order".split()
)
# A Tagalog sentence that asks ("Hanap ako ng ...", "Kailangan ko ng ...", "Meron ba ...").
ASKS = re.compile(
    r"\b(?:hanap\w*|hinahanap|naghahanap|kailangan|gusto|bili|bibili|bumili|bilhin|bilhan|pabili|pa-order|"
    r"paki\w*|meron ba|may .* ba)\b",
    re.IGNORECASE,
)
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
    "bag": "bag", "kuwintas": "necklace", "singsing": "ring", "hikaw": "earring", "larawan": "picture",
    # food
    "bigas": "rice", "kanin": "rice", "asukal": "sugar", "asin": "salt", "suka": "vinegar", "toyo": "soy",
    "mantika": "oil", "itlog": "egg", "gatas": "milk", "tinapay": "bread", "kape": "coffee", "tubig": "water",
    "prutas": "fruit", "gulay": "vegetable", "isda": "fish", "manok": "chicken", "baboy": "pork", "karne": "meat",
    "tsokolate": "chocolate", "pulot": "honey", "harina": "flour", "mani": "peanut", "mangga": "mango",
    # qualities and values
    "pula": "red", "puti": "white", "itim": "black", "asul": "blue", "berde": "green", "dilaw": "yellow",
    "kahel": "orange", "lila": "purple", "kahoy": "wood", "bakal": "steel", "plastik": "plastic",
    "tela": "fabric", "katad": "leather", "maliit": "small", "malaki": "big", "mura": "cheap",
    "bago": "new", "luma": "old", "lalaki": "man", "panlalaki": "man", "babae": "woman", "pambabae": "woman",
    "bata": "kid", "pambata": "kid", "sanggol": "baby", "pang-baby": "baby", "mabango": "fragrant",
    # what riddles ask about
    "mundo": "world", "daigdig": "world", "bansa": "country", "lungsod": "city", "lalawigan": "province",
    "probinsya": "province", "bundok": "mountain", "bulkan": "volcano", "ilog": "river", "isla": "island",
    "pulo": "island", "dagat": "sea", "lawa": "lake", "taon": "year", "bayani": "hero", "pangulo": "president",
    "presidente": "president", "pangalan": "name", "sumulat": "write", "isinulat": "write", "sinulat": "write",
    "manunulat": "author", "nanalo": "win", "bilang": "number", "hayop": "animal", "ibon": "bird",
    "bulaklak": "flower", "puno": "tree", "watawat": "flag", "bandila": "flag", "pinakamataas": "highest",
    "pinakamalaki": "biggest", "pinakamahaba": "longest", "pambansang": "national", "pambansa": "national",
    "pilipinas": "philippines", "pinas": "philippines", "unang": "first", "una": "first",
    # buying
    "presyo": "price", "libre": "free", "regalo": "gift", "tindahan": "shop",
}  # fmt: skip
