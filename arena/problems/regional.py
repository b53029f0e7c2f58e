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
# Hiligaynon, with the Waray and Bikol courtesies a message home ends with.
HILIGAYNON = frozenset(
    "gid kag akon namon amon naton aton subong indi bala nami kamo tani maayo maupay marhay mabalos tabi "
    "ngan asin digdi".split()
)
# Kinship words and endearments, as titles or alone ("my Apu", "Inang", "Manong Ed", "my palangga").
KIN = frozenset(
    "nanay tatay inay itay nanang tatang inang amang apu apong ima lolo lola lelong lelang ingkong impo kuya "
    "manong manang ading bunso pamangkin tito tita tiyo tiya ninong ninang inaanak palangga "
    "atsi diko ditse sangko".split()
)
# Said of the buyer: an overseas Filipino worker and what one sends home.
ABROAD = frozenset("ofw ofws balikbayan padala pasalubong".split())

# Titles that also name a home brand or an engraving's person ("Tita Beng's ube halaya", "engraved 'Ate
# Mel'"): words of the request, never names, but not frame words either.
TITLES = frozenset("tita tito ate kuya".split())
# Who an order is for frames the request like "for my"; "Apu ku" and "Lola" read as no brand.
FRAME = ILOCANO | KAPAMPANGAN | HILIGAYNON | ABROAD | (KIN - TITLES)
