"""The words of the other Philippine languages a request sent home carries: Ilocano, Kapampangan and
Hiligaynon (Ilonggo) function words and courtesies, and the kinship words of all of them (no names).

A shopper working abroad orders for family at home and writes as the family speaks: "para kay Apu ku sa
Pampanga, salamat pu", "for my Manang in Iloilo, palangga ko gid siya", "Agyamanak!". Neither the meaning
model nor simplemma's dictionaries know these words, so each would read as a name (a brand) that the
other wording of the same request lacks. Every entry is from general knowledge of the languages, not from
any labelled pool. Words that are also English words or marks a request uses are left out: "ken" (Barbie
and Ken), "ti" (titanium), "king" (king size), "pu" (PU leather), "tata" (a brand), "mayo".
"""

from __future__ import annotations

import re

# Ilocano: articles and linkers, pronouns, demonstratives, particles, courtesies.
ILOCANO = frozenset(
    "iti dagiti kadagiti daytoy dayta diay ditoy idiay sadiay ania adda awan kayat kaykayat diak saan wen "
    "ngem wenno ngarud met laeng unay piman agyamanak naimbag aldaw rabii bigat nalaka nangina balay "
    "ubing kabsat kabsatko".split()
)
# Kapampangan.
KAPAMPANGAN = frozenset(
    "ku mu ing ning kareng karing ampo keng kekami kekayu yaku ika iya ila ikami ikatamu mayap abak bengi "
    "malagu dakal dacal".split()
)
# Hiligaynon, with the Waray and Bikol courtesies a message home ends with: markers and pronouns
# ("sang", "sini"), particles, question words, the verbs that ask and buy in their forms ("pangitai ko",
# "bakalon ko", "magbakal"), the labels of a value ("8 inches ang kadamol": its thickness; "kadamuon":
# how many), and the greetings and courtesies around a request ("Maayong aga!", "Daghang salamat").
HILIGAYNON = frozenset(
    "gid kag akon namon amon naton aton subong indi bala nami kamo tani maayo maupay marhay mabalos tabi "
    "ngan asin digdi sang sini sadto ara yara abi ayhan kuno anay ukon apang amo ano diin pila tagpila "
    "ngaa paano luyag kinanglan karon moy koy "
    "pangitai pangita-i pangitaan pangitaon magpangita nagapangita ginapangita bakalon magbakal nagbakal "
    "ibakal ginbakal pabakal bakla-on mabakal "
    "tubtob kubos magsobra maglapaw lapaw kadamol damol kadamuon kadaku labing tibuok ginasaulog gitawag bansag pareho parehong abri "
    "maayong buntag gabii daghang amping".split()
)
# Hiligaynon (and Cebuano) content words riddles and requests use -> their English words.
GLOSSARY: dict[str, str] = {
    "balangaw": "rainbow", "bangaw": "rainbow", "tul-an": "bone", "bukog": "bone", "hamtong": "adult",
    "lawas": "body", "edad": "age", "likod": "back", "magdudula": "player", "manunugtog": "musician",
    "taas": "high", "bantog": "famous", "ido": "dog", "kuting": "cat", "bayo": "clothes",
    "sapatos": "shoe", "baligya": "sell",
}  # fmt: skip
# Hiligaynon numerals the Tagalog and Cebuano tables lack ("anum", six), and "kag" (and) joining the parts
# of one number: "napulo kag duha ka libo" is 12,000, "tatlo ka libo kag lima ka gatos" 3,500.
UNITS = {"anum": 6, "anom": 6}
LINKERS = ("kag",)
# Hiligaynon price bounds as English words: "tubtob 1,500" (up to), "indi magsobra sa 900" and "indi
# maglapaw 10k" (not over), "kubos sa 2k" (less than).
BOUNDS = (
    (re.compile(r"\b(?:indi|dili|di) (?:mag|mo|ma)?(?:sobra|lapaw|lapas|labaw)(?: (?:sa|sang|og))?\b"), "up to"),
    (re.compile(r"\btubtob(?: (?:sa|sang))?\b"), "up to"),
    (re.compile(r"\bkubos(?: (?:sa|sang))?\b(?= ?(?:₱|php|p)?\s?\d)"), "under"),
)
BOUND_CUE = ("magsobra", "maglapaw", "molapaw", "lapaw", "tubtob", "kubos")
# A Hiligaynon sentence that asks, the thing first as often as not ("Payong ang kinanglan ko.", "Microwave
# oven ang bakalon ko", "Luyag ko sang ...").
ASKS = r"kinanglan|bakalon|magbakal|luyag|pangitai|pangita-i"
# Kinship words and endearments, as titles or alone ("my Apu", "Inang", "Manong Ed", "my palangga").
KIN = frozenset(
    "igsoon manghod nanay tatay inay itay nanang tatang inang amang apu apong ima lolo lola lelong lelang ingkong impo kuya "
    "manong manang ading bunso pamangkin tito tita tiyo tiya ninong ninang inaanak palangga "
    "atsi diko ditse sangko utod".split()
)
# Said of the buyer: an overseas Filipino worker and what one sends home.
ABROAD = frozenset("ofw ofws balikbayan padala pasalubong".split())

# Titles that also name a home brand or an engraving's person ("Tita Beng's ube halaya", "engraved 'Ate
# Mel'"): words of the request, never names, but not frame words either.
TITLES = frozenset("tita tito ate kuya".split())
# Who an order is for frames the request like "for my"; "Apu ku" and "Lola" read as no brand.
FRAME = ILOCANO | KAPAMPANGAN | HILIGAYNON | ABROAD | (KIN - TITLES)
