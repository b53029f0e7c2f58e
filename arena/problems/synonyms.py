"""Shopping synonyms: words a shopper uses for one thing, mapped to one canonical word.

Why a table of our own beside WordNet (arena/problems/lexicon.py reads Debian's
``wordnet-base`` for what one word is to another): WordNet's synsets miss the
shopping sense of many pairs a paraphrase uses: "sticker"
and "decal", "couch" and "sofa" or "tee" and "t-shirt" sit in different synsets,
and "shipping" / "delivery" are only related, not synonyms. The table lists
lemmas (simplemma's output), so "stickers", "Sticker" and "stickers'" all reach it.

Each group is one meaning; a word belongs to at most one group (a test checks it),
and the canonical form is the group's first word. Groups join only words that can
stand for one another in a product request: "pen" and "marker" are two products
and stay apart, as do colours, materials and brands.
"""

from __future__ import annotations

from arena.problems.tagalog import GLOSSARY

GROUPS: tuple[tuple[str, ...], ...] = (
    # audiences
    ("baby", "infant", "newborn", "babies"),
    ("kid", "child", "children", "kids", "toddler"),
    ("woman", "lady", "ladies", "female", "women", "womens"),
    ("man", "gentleman", "male", "men", "mens", "gent", "gents", "bloke", "blokes"),
    ("unisex", "genderless"),
    # short forms a shopper types for a name's words
    ("mount", "mt"),
    ("philippines", "ph", "pinas", "philippine"),
    # short forms typed on a phone for a value or a thing
    ("black", "blk"),
    ("white", "wht"),
    ("size", "sz"),
    ("calculator", "calcu"),
    ("vacuum", "vac", "hoover"),
    ("bluetooth", "bt"),
    ("restaurant", "resto"),
    # objects people name two ways
    ("sticker", "decal"),
    ("sofa", "couch", "settee"),
    ("tshirt", "tee", "t-shirt"),
    ("sneaker", "trainer", "rubber shoes", "rubber shoe"),  # "rubber shoes": Philippine English for sneakers
    ("trouser", "pant", "pants", "trousers", "slack"),
    ("cellphone", "smartphone", "mobile", "cellular", "phone", "cell phone", "mobile phone"),
    ("laptop", "notebook computer"),
    ("tv", "television", "telly"),
    ("fridge", "refrigerator", "ref"),
    ("aircon", "ac", "air conditioner", "air con", "airconditioner"),
    ("ballpoint", "ballpen", "ballpens", "ball pen", "ballpoint pen"),  # "ballpen": Philippine English
    ("bag", "sack"),
    ("case", "cover", "casing"),
    ("bottle", "flask"),
    ("mug", "cup"),
    ("carpet", "rug"),
    ("bin", "container"),
    ("photo", "picture", "photograph"),
    ("glue", "adhesive"),
    ("scent", "fragrance", "aroma"),
    ("flavor", "flavour", "taste"),
    ("color", "colour", "hue", "colorway"),
    ("gray", "grey"),
    ("transparent", "clear", "see-through"),
    ("jewelry", "jewellery"),
    ("aluminum", "aluminium"),
    ("microfiber", "microfibre"),
    ("wood", "wooden"),
    ("tire", "tyre"),
    ("organizer", "organiser"),
    ("kit", "set", "bundle", "pack", "package", "packet"),
    ("piece", "pc", "pcs", "unit"),
    ("cosmetic", "makeup", "make-up"),
    # "a notebook with 100 leaves": the lemmatiser reads "leaves" as the verb
    ("leaf", "leave"),
    ("remote", "remote control"),
    ("tapemeasure", "tape measure", "measuring tape", "measure tape"),
    ("earphone", "earbud", "earpiece"),
    ("headphone", "headset"),
    ("speaker", "loudspeaker"),
    ("charger", "charging adapter"),
    ("cable", "cord"),
    ("usbc", "usb-c", "type-c", "usb type-c", "usb-c type"),
    ("staple", "staple wire"),
    ("tenkeyless", "tkl"),
    ("person", "people"),  # "a four-person tent" / "a tent for 4 people"
    ("powerbank", "power bank", "portable charger", "portable battery", "battery pack", "portable battery pack"),
    ("headlamp", "head lamp", "head-mounted flashlight", "head-mounted light", "head-mounted lamp", "head torch"),
    ("battery", "cell"),  # "AA cells"
    ("screen", "display"),
    ("filter", "filtration"),
    ("cuft", "cu ft", "cubic feet", "cubic foot"),
    # a voucher for a shop's first order: "new-user voucher", "first-time-customer coupon" ("new" is no condition)
    (
        "newuser",
        "new user",
        "new-user",
        "new customer",
        "new buyer",
        "first-time customer",
        "first-time buyer",
        "first-time user",
        "first-time shopper",
    ),
    ("paperback", "softbound", "soft-bound", "softcover", "soft-cover"),
    ("mah", "milliampere-hour", "milliamp-hour", "milliampere hour", "milliamp hour"),
    ("handbag", "purse"),
    ("backpack", "rucksack", "knapsack"),
    ("eyeglasses", "spectacles", "eyewear"),
    ("trash", "garbage", "rubbish"),
    ("flashlight", "torch"),
    ("pacifier", "dummy", "soother"),
    ("diaper", "nappy"),
    ("faucet", "tap"),
    ("cookie", "biscuit"),
    ("candy", "sweets"),
    ("stroller", "pram", "pushchair", "buggy"),
    ("wardrobe", "closet"),
    ("motorcycle", "motorbike"),
    ("bicycle", "bike"),
    ("sweater", "jumper", "pullover"),
    ("cardigan", "cardi"),  # a kind of sweater to WordNet, another garment to a buyer
    # British and Australian names ("a cossie", "a queen doona", "an electric jug")
    ("swimsuit", "swimwear", "bathing suit", "cossie", "cozzie", "bathers"),
    ("comforter", "duvet", "doona"),
    ("kettle", "electric jug"),
    ("notebook", "notepad"),
    ("car", "automobile"),
    # "auto shut-off", "auto-clean": in a product's features "auto" is automatic, not a car
    ("automatic", "auto"),
    # qualities
    ("big", "large", "huge"),
    ("xl", "extra large", "extra-large", "x-large"),
    ("xs", "extra small", "extra-small", "x-small"),
    ("small", "little", "tiny", "mini"),
    ("cheap", "affordable", "inexpensive", "budget-friendly"),
    ("waterproof", "water-resistant", "water resistant"),
    ("wireless", "cordless"),
    ("portable", "handheld"),
    ("original", "authentic", "genuine"),
    ("new", "brand-new", "brand new", "unused", "sealed", "unopened"),
    ("durable", "sturdy", "heavy-duty", "tough"),
    ("lightweight", "light-weight"),
    # Tagalog's "made of bulak" (cotton; Cebuano's "bulak" is a flower)
    ("cotton", "yari sa bulak", "gawa sa bulak"),
    # Tagalog's "steel that does not rust", Chavacano's Spanish
    (
        "stainless",
        "stainless steel",
        "rustproof",
        "hindi kinakalawang na asero",
        "di kinakalawang na asero",
        "acero inoxidable",
        "inoxidable",
    ),
    ("cute", "adorable", "lovely"),
    ("elegant", "classy", "stylish"),
    ("soft", "plush"),
    ("vintage", "retro"),
    ("multi", "multipurpose", "multi-purpose", "versatile"),
    ("anc", "noise cancelling", "noise canceling", "noise cancellation", "noise-cancelling", "noise-canceling"),
)


def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in GROUPS:
        canonical = group[0]
        for word in group:
            table[word] = canonical
    return table


#: lemma -> canonical lemma (multi-word entries are matched on the joined words, see asks.py); a
#: Tagalog word reads as its English word's canonical lemma (arena/problems/tagalog.py).
CANONICAL: dict[str, str] = _table()
for _tagalog, _english in GLOSSARY.items():
    CANONICAL.setdefault(_tagalog, CANONICAL.get(_english, _english))
