"""What a problem asks for: its canonical constraint set, read from the query text and the reward.

The leak-cluster guard (:mod:`arena.problems.clusters`) compares problems by what
they ask, not by their gold ids (a variant re-grounded in another catalog has
other gold) and not by their wording alone (two requests that differ in one
brand, noun, colour, price bound or voucher term are two problems however alike
they read). :func:`read_ask` turns one problem into an :class:`Ask`:

- from the **query text** (every problem has one; a query-only problem has
  nothing else). The text is cut into sentences; the voucher sentences (budget,
  threshold, discount, cap) give the voucher terms; sentences of personal
  narrative that ask for nothing ("My daughter turned seven last week and ...")
  are context, left out; the rest is the request. From the request: numbers
  (``text2num`` turns "two hundred seventy-two" into 272; "1,500", "1.5k",
  "112.00" normalise too), price directions (above / below / between in any of
  their phrasings), services (free shipping, cash on delivery, LazMall, flash
  sale in their phrasings) and the content words, lemmatised with ``simplemma``
  and mapped through :mod:`arena.problems.synonyms`, less request boilerplate
  ("show me", "can you", "options", "shop that offers").
- from the **reward**, when there is one: each gold product's constraints
  (price interval, attributes with the brand, SKU options, services; the gold id
  and title are left out: a re-grounded variant has others), the voucher terms
  and the knowledge fact.

Two asks *agree* when every constraint both sides state is equal: the text parts
always (both have a text), the reward parts when both have a reward.
"""

from __future__ import annotations

import hashlib
import re
import string
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import NamedTuple

import orjson

from arena.problems import cebuano, chavacano, lexicon, regional, tagalog
from arena.problems.model import Intent, Problem
from arena.problems.patterns import alternation
from arena.problems.phrase_table import PhraseTable
from arena.problems.signature import canonical_reward
from arena.problems.synonyms import CANONICAL

# --- sentences -------------------------------------------------------------------------------

# Sentence ends, list separators and list markers: "(1) A ...; (2) A ..." and bulleted lines
# become one unit per item, so items can be reordered or re-framed.
# An abbreviation's point ends no sentence unless a capital follows: "10 cu. ft.", "min. spend ₱999".
_ABBREVIATED = ("cu", "sq", "min", "max", "approx", "no", "vs", "pcs", "qty")
_UNITS = re.compile(
    r"(?<=[.!?])"
    + "".join(rf"(?<!\b{a}\.)" for a in _ABBREVIATED)
    + r"\s+|(?:"
    + "|".join(rf"(?<=\b{a}\.)" for a in _ABBREVIATED)
    + r")\s+(?=[A-Z])|\n+|;\s*|\(\d{1,2}\)|(?<=[\s;:.])\d{1,2}\)\s+"
)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+", re.MULTILINE)

_PARAGRAPHS = re.compile(r"\n\s*\n")
# A voucher sentence's clauses; "using" / "gamit" opens the voucher's part of "Buy a gaming headset
# with 7.1 surround using a ₱200 off voucher", whose first part is the request's.
_CLAUSES = re.compile(
    r"[,;:]\s+|\s+[-–—]\s+|\s*\.\s+|"
    r"\s+(?=(?:using|gamit|gagamitin|applying)\s+(?:[\w₱%.,'-]+\s+){0,4}?(?:vouchers?|coupons?|promo|code|discount)\b)"
)
_VOUCHER_PARAGRAPH = re.compile(r"\b(?:vouchers?|coupons?)\b", re.IGNORECASE)
_VOUCHER_CUE = re.compile(
    r"\b(?:vouchers?|coupons?|budget|discount\w*|spend|spending|valid|exceeds?|exceeding|threshold|minimum|"
    r"cap of|capped|a cap of|cap at|applies|apply|rules?|promo code|no cap|uncapped|(?:no|walang) max(?:imum)?|"
    r"stack|stacked|stackable|waiver)\b|"
    # A percent, unless a word of the product follows it ("70% isopropyl alcohol", "100% cotton towels")
    r"%(?!\s*(?!(?:off|discount\w*|cash\s?back|back|vouchers?|coupons?|rebate|promo|less|up|max\w*|cap\w*|with|"
    r"min\w*|on|if|when|for|of|kapag|pag|basta|lang|only|and|or|but|hanggang|bawas|sa|na|ang|at|savings?|"
    r"deduction|till|until|upto|in|applies|that|which|is|if)\b)[a-z])|"
    # a percentage taken off ("the seller gives 8 percent off", "ten percent discount")
    r"\b(?:percent|per cent|pct)\s+(?:off|discount|back|cashback)\b|"
    # money off said without a voucher word ("thirty-five pesos off when the order is ...", "₱60 less")
    r"(?:\d|\bpesos?|\bphp)\s*(?:off|less)\b(?! than)|\bminus\s*(?:₱|php|\d)",
    re.IGNORECASE,
)
# A sentence that asks: request verbs in their asking forms, wishes, questions, prices.
# "looking forward" or "recommended this app" are not asks; "I need a" / "I want" are.
_REQUEST_CUE = re.compile(
    r"\?|\b(?:show|find|looking for|look for|searching for|search for|seeking|hunting for|in need of|"
    r"i want|we want|i need|we need|i'd like|i would like|we'd like|we would like|i'd love|i would love|"
    r"buy|purchase|get me|recommend|prefer|preferably|ideally|should|must|has to|have to|"
    r"help me|do you have|is there|are there|can you|could you|can i|please|sells?|offers?|carry|carries|"
    r"stocks?|hoping to (?:get|buy|find)|shop for|priced|costing|costs?|pesos?|php)\b"
)  # on lower-cased text: a case-blind pattern scans three times slower
# Asking written another way, tried only where the cue above finds nothing (most requests have one).
_REQUEST_CUE_MORE = re.compile(
    # "₱" is no word character, so no word boundary precedes it; a budget stated with its amount
    # ("My limit is 1,200.") asks, however it opens.
    r"₱|\b(?:budget|limit|max|maximum)\s*(?:is\s+|of\s+|:\s*)?\d|"
    # A shopper's own request opening as narrative does ("I'm after a hair mask.", "I only want
    # Arly.", "I'm hoping to get ..."), an amount with its currency glued on ("PHP372", "P500"), a
    # bound with its amount ("over 500", not "for over 2 years"), or a label and its value ("My
    # cart: a korean necklace", "Brand: Arly"): each asks, however the sentence opens.
    r"\b(?:i'?m|i am|we'?re|we are) (?:after|shopping|hoping|trying to (?:get|buy|find)|planning to buy)\b|"
    r"\b(?:i|we) (?:only |just |also |still |definitely |really )?(?:want|need|prefer|require)\b"
    r"(?! (?:this|it|them|that|these|those)\b)|\b(?:php|p)\d|"
    # the brand someone keeps to: "My husband only uses Gillette.", "she only trusts Cetaphil"
    r"\bonly (?:uses?|trusts?|wears?|buys?|likes?)\b|"
    # what someone it is for wants of it: "My daughter wants it in pink.", "He needs it to be waterproof."
    r"\b(?:wants?|needs?|prefers?|likes?) (?:it|them|one) (?:in|to be|with)\b|"
    r"\b(?:under|below|above|over|less than|more than|cheaper than|up to|at most|at least)\s+(?:php\s?|p)?\d[\d,.]*"
    r"(?!\s*(?:years?|months?|weeks?|days?|hours?|minutes?|kids?|times?|people)\b)|"
    r"^[\w' ]{1,30}:\s*(?!(?:my|i|we|our|so|well|it|this|there|he|she|they|last|when)\b)\w|"
    # A live-selling claim, however excited: "mine po yung floral dress na yellow!!", "pa-reserve po".
    r"^(?:mine|pa-?mine|pa-?reserve|reserve)\b"
)
# A sentence of personal narrative opens with one of these ("My sister moved ...", "So last
# weekend we ...", "Thanks in advance ..."); a list item ("a red mug for my sister") does not,
# and so is never taken for context. Such a sentence is context only when it asks nothing.
_NARRATIVE = re.compile(
    r"^(?:(?:so|well|anyway|oh|okay|ok|and|but|honestly|funny enough|fun fact|by the way|btw|long story short|"
    r"quick story|a bit of background|background),?\s+)?"
    r"(?:my|our|we|we're|we've|i|i've|i'm|i was|i had|i am|last|yesterday|recently|honestly|things have been|"
    r"moved|just moved|"  # a diary's dropped subject: "Moved to Dumaguete last month and ..."
    r"life|money|thanks|thank you|cheers|appreciate|quick story|a bit of background)\b",
    re.IGNORECASE,
)

# --- number and money forms ------------------------------------------------------------------

# Every word text2num turns into digits: it runs only on a text that has one (it costs ~25 us,
# a set lookup of the words ~2 us).
_NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million
    billion first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth
    fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth fortieth fiftieth
    sixtieth seventieth eightieth ninetieth hundredth thousandth""".split()
)
_TWO = re.compile(r"\btwo\b")
_DOZENS = re.compile(r"\b(\d+) dozens?\b")
_ONE_UNIT = re.compile(
    r"\bone(?=[ -](?:year|years|month|months|week|weeks|day|days|hour|hours|liter|litre|liters|litres|kilo|kilos|kg|"
    r"meter|metre|meters|metres|inch|foot|gallon|seater|person|terabyte|tb|hp|horsepower)\b)"
)
# "hundred and" before another "... hundred" (or "thousand and" before "... thousand") cannot
# continue one amount: "four hundred and nine hundred" is two; "one thousand and two hundred" one.
_AMOUNT_AND_AMOUNT = re.compile(
    r"\b(hundred) and (?=(?:[a-z]+[ -]){1,2}hundred\b)|\b(thousand) and (?=(?:[a-z]+[ -]){1,4}thousand\b)"
)
# A range in words: the "and" of "between ... and ..." parts two amounts ("between five hundred and
# one thousand two hundred", not 501,200); the first amount may hold a British "and" of its own
# ("between one hundred and fifty and three hundred").
CARDINAL = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million)"
)
_WORDS_RANGE = re.compile(rf"\bbetween ({CARDINAL}(?:[ -](?:and )?{CARDINAL})*) and ({CARDINAL}(?:[ -]{CARDINAL})*)\b")
# A number word hyphened to a unit; "twenty-two" keeps its hyphen (a digit word follows).
_WORD_HYPHEN = re.compile(
    r"\b((?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|"
    r"fifty|sixty|seventy|eighty|ninety|hundred|thousand))-(?!(?:one|two|three|four|five|six|seven|eight|nine)\b)"
)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # "10,000mAh" too: a unit may be glued on
_TRAILING_ZEROS = re.compile(r"(?<=\d)\.0+\b")
_KILO = re.compile(r"(\d+(?:\.\d+)?) ?k\b")  # on lower-cased text
_DECIMAL_COMMA_K = re.compile(r"\b(\d{1,3}),(\d) ?k\b")
_SPACED_MAH = re.compile(r"\b(\d{1,3}) (\d{3}) ?(?=mah\b)")
_SPACED_THOUSANDS = re.compile(  # only where the amount ends there: "₱150 100 pcs" is a price and a count
    r"((?:₱|\bphp)\s?\d{1,3}) (\d{3})(?=\s*(?:$|[.,;:!?)]|(?:only|lang|max|pesos?|php|budget)\b))"
)
_THOUSAND = re.compile(r"(\d+(?:\.\d+)?) thousand\b")  # "1.5 thousand" (text2num leaves "1.5" alone)
# "PHP2,500", "P500", "₱500": a currency prefix glued to the amount.
_GLUED_CURRENCY = re.compile(r"\b(?:php|p)(?=\d)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# "First, ... Second, ..." list words (text2num writes "1st", "2nd"): the list frame, not a constraint.
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_DASH_RANGE = re.compile(r"(\d)\s*[-–—]\s*(?=\d)")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")

# --- price directions ------------------------------------------------------------------------

# Replaced on the lower-cased, space-padded text, longest phrase first. "gt" / "lt" / "btw"
# are the direction tokens; "from 5 to 10" and "5 to 10" / "5-10" read as between.
_AT_MOST = (
    "no more than|not more than|not exceeding|not over|at most|at the most|up to|less than|lower than|"
    "cheaper than|below|under|maximum of|maximum|max|or less|or lower|or below|and below|and under|"
    "within a budget of|tops|capped at|no higher than|not above|a maximum price of|no pricier than|"
    "less expensive than|not pricier than|or cheaper|and cheaper|at maximum|"
    "wont cost more than|doesnt cost more than|does not cost more than|shouldnt cost more than|"
    "should not cost more than|no more expensive than|not more expensive than|"
    "a ceiling of|ceiling of|a price ceiling of|a limit of|a spending limit of|nothing above|nothing over|"
    "tops out at|maxes out at|wont go over|will not go over|wont go past|will not go past|doesnt go past|"
    "does not go past|dont go past|do not go past|doesnt go over|does not go over|wont go beyond"
)
_AT_LEAST = (
    "more than|greater than|higher than|at least|above|over|exceeding|starting at|starting from|"
    "starts at|from a minimum of|minimum of|minimum|min|or more|or higher|or above|and above|and up|or up|or upwards|"
    "and over|upwards of|upward of|no less than|not less than|not below|beyond|more expensive than|pricier than|"
    "costlier than|and upwards|and more|at minimum|minimally"
)
_PRICE_PHRASES = sorted(
    [(f" {p} ", f" {tok} ") for phrases, tok in ((_AT_MOST, "lt"), (_AT_LEAST, "gt")) for p in phrases.split("|")],
    key=lambda pair: -len(pair[0]),
)
PRICE_TABLE = PhraseTable(_PRICE_PHRASES, repeat=True)  # a loop: adjacent matches share their separating space
# A currency word may sit beside either amount ("35 pesos to 86 pesos", "between PHP35 and
# PHP86"): it belongs to the range, which reads the same without it. "and" joins two amounts of
# a range only after "between" / "from": "under 500 pesos and 2 kg dumbbells" is two constraints.
_RANGE_CURRENCY = r"(?:(?:php|pesos?|p)\s+)?"
_RANGE = re.compile(
    rf"\b(?:(?:between|from|range of|ranging from|anywhere from|somewhere between|within)\s*{_RANGE_CURRENCY}"
    rf"(\d+(?:\.\d+)?)\s+{_RANGE_CURRENCY}(?:to|and|up to|through|till|until)"
    rf"|(\d+(?:\.\d+)?)\s+{_RANGE_CURRENCY}(?:to|up to|through|till|until))\s+{_RANGE_CURRENCY}(\d+(?:\.\d+)?)\b"
)


def mark_ranges(padded: str) -> str:
    """Every price range of a normalised text as ``" btw LOW HIGH "``."""
    if not _RANGE.search(padded):
        return padded
    return _RANGE.sub(lambda m: f" btw {m.group(1) or m.group(2)} {m.group(3)} ", padded)


# Currency words go before the phrases are read: "from 654 to Php 960" is a range.
_CURRENCY_WORDS = sorted(
    (f" {w} " for w in ("php", "pesos", "peso", "philippine pesos", "philippine peso", "phil peso")),
    key=len,
    reverse=True,
)
_DIRECTIONS = ("gt", "lt", "btw")

# --- services --------------------------------------------------------------------------------

# Phrase -> service name (the reward's service names); each phrasing a shopper uses.
_SERVICE_PHRASES: dict[str, tuple[str, ...]] = {
    "freeShipping": (
        "free shipping", "free delivery", "ships for free", "ship for free", "shipping for free",
        "delivered for free", "delivery for free", "complimentary shipping", "complimentary delivery",
        "no-cost shipping", "no cost shipping", "no-cost delivery", "no cost delivery", "zero shipping fee",
        "no shipping fee", "no shipping fees", "no delivery fee", "without shipping fees", "shipping is free",
        "delivery is free", "free ship", "free postage", "ship free", "ships free", "shipped free",
        "delivered free", "delivers free", "sent free", "shipping fee waiver", "delivery fee waiver",
        "free of charge", "shipped free of charge", "ships free of charge", "delivered free of charge",
        "libre ang shipping", "libreng shipping", "libre shipping", "libre ang delivery", "libreng delivery",
        "libre ang sf", "libreng sf", "free sf", "without sf", "no sf", "zero sf",
        "libre ang pagpadala", "libre nga pagpadala", "libreng padala", "libre ang padala",
        "libreng pagpapadala", "libre ang pagpapadala", "walang bayad ang pagpapadala", *chavacano.FREE_SHIPPING,
    ),
    "COD": (
        "cash on delivery", "cash-on-delivery", "pay on delivery", "payable on delivery", "payment on delivery",
        "pay upon delivery", "pay when it arrives", "cod", "c.o.d", *chavacano.COD,
        # Cebuano: pay on arrival
        "bayad pag abot", "bayad pagabot", "bayad inig abot", "bayad sa pag abot", "bayran inig abot",
        "bayran pag abot", "bayri inig abot", "bayri pag abot",
        # Tagalog: pay on arrival
        "bayad pagdating", "bayad sa pagdating", "magbabayad pagdating", "babayaran pagdating",
        "bayaran pagdating", "cash pagdating",
    ),
    "official": (
        "official lazmall store", "official lazmall", "lazmall store", "lazmall", "laz mall", "official store", "official shop", "official seller", "official stores",
        "official brand store", "flagship store", "flagship shop", "official flagship store", "official flagship",
        "flagship outlet", "official outlet",
    ),
    "flashsale": ("lazflash", "laz flash", "flash sale", "flash deal", "flash deals", "flash sales"),
    # What the seller adds besides shipping and paying: a request that asks one asks more than one
    # that does not ("with 7-day free returns", "gift-wrapped", "express delivery").
    "returns": ("free returns", "free return", "easy returns", "day returns", "day free returns", "return policy"),
    "giftWrap": ("gift wrap", "gift wrapped", "gift wrapping", "giftwrap", "giftwrapped", "gift-wrapped"),
    "installment": ("installment", "installments", "instalment", "instalments", "installment plan"),
    "fastDelivery": (
        "express delivery", "express shipping", "same day delivery", "same-day delivery", "sameday delivery",
        "next day delivery", "next-day delivery", "rush delivery", "priority shipping",
    ),
    "liveArrival": ("live arrival", "live arrival guarantee", "doa guarantee"),
    "installation": (
        "installation", "free installation", "installation included", "installation service", "with install",
        "no installation fee", "no installation fees", "no installation charge", "installation fee waived",
        "free install", "install included", "with free install", "free installation included",
        "installed for free", "installed free", "installed free of charge", "installed at no cost",
        "installed at no extra cost", "installed at no charge",
        # the buyer asking for it: "I also need it installed for me", "have it installed"
        "installed for me", "installed for us", "need it installed", "have it installed", "get it installed",
        # Tagalog: the seller installs it ("ako na ang magkakabit", the buyer installing, is none)
        "sila na ang magkakabit", "sila na magkakabit", "sila ang magkakabit", "libreng kabit", "free kabit",
        "kasama ang kabit", "kasama na ang kabit", "may libreng kabit",
    ),
    "assembly": (
        "assembly", "free assembly", "assembly service", "assembly included", "no assembly fee",
        "assembled for free", "assembled free of charge", "assembled at no cost", "assembled at no extra cost",
        "free assembly included",
    ),
}  # fmt: skip
_SERVICE_LOOKUP = sorted(
    ((f" {p} ", s) for s, phrases in _SERVICE_PHRASES.items() for p in phrases), key=lambda pair: -len(pair[0])
)
_SERVICE_TABLE = PhraseTable(_SERVICE_LOOKUP)
# One of these is in every phrase above: one scan of the text before 133 (most texts name no service).
_SERVICE_KEY = re.compile(
    r"free|ship|deliver|instal|official|flagship|mall|kabit|padala|cod|c\.o\.d|return|gift|flash|sf |assembl|"
    r"guarantee|arriv|abot|dating|policy|charge|envio|entrega"
)
# Services said as sentences, not as a fixed phrase: the service's noun with what makes it free
# ("shipping has to be free", "the shipping fee should be ₱0", "no delivery fee", "I don't want to pay for delivery"), or paying
# tied to the arrival ("payable in cash on arrival", "pay upon receipt"). On the normalised text
# (apostrophes dropped: "dont"). "Free" beside a delivery word alone is not one: "a BPA-free
# bottle with fast delivery" states no service, so the free-ness must attach to the noun.
_SHIPPING = r"(?:shipping|delivery|postage|shipment)"
_FEE = r"(?:fees?|costs?|charges?)"
_SERVICE_SENTENCES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            rf" {_SHIPPING}(?: {_FEE})? (?:(?:has|have|needs?|ought|got) to be|should be|must be|will be|would be|"
            r"is|are|to be|being)? ?(?:free(?: of charge)?|waived|at no cost|(?:(?:php|p) ?)?0)(?= )"
        ),
        "freeShipping",
    ),
    (re.compile(rf" (?:no|zero|without(?: any)?|free of)(?: \w+)? {_SHIPPING} {_FEE}(?= )"), "freeShipping"),
    # Delivery said free together with a service: "delivery and installation at no extra cost" (the
    # service is read, and marked, before these sentences are).
    (
        re.compile(
            rf" {_SHIPPING}(?= (?:and|&)(?: (?:svc)?(?:installation|assembly))? (?:at no (?:extra |additional )?"
            r"(?:cost|charge)|for free|are free|included free) )"
        ),
        "freeShipping",
    ),
    # Not a peso for it, or the seller's to pay: "shipping must not cost me a peso", "I'm not paying a
    # centavo for the courier", "the shipping should be on the seller", "the seller brings it without
    # charging me".
    (
        re.compile(
            rf" {_SHIPPING}(?: (?:must|should|will|would|can))? not cost(?: me| us)? (?:a|one|a single) (?:peso|centavo|cent)"
            r"| not (?:paying|pay|spending|spend) (?:a|one|a single) (?:peso|centavo|cent) (?:for|on) (?:the )?"
            r"(?:courier|shipping|delivery|rider|shipment)"
            rf"| {_SHIPPING}(?: (?:should|must|will|has to|is to) be| is)? on the (?:seller|shop|store)"
            r"| (?:seller|shop|store) (?:brings|delivers|sends|ships) (?:it|them) without charging(?= )"
        ),
        "freeShipping",
    ),
    # Paying nothing for it: "I pay nothing for delivery", "without paying for shipping".
    (re.compile(rf" (?:pay|paying|pays|spend|spending) nothing (?:for|on) (?:the )?{_SHIPPING}(?= )"), "freeShipping"),
    # A generator's sentences: "shipping must cost the buyer nothing", "delivery at no charge is a must",
    # "delivery should not cost me anything".
    (
        re.compile(
            rf" {_SHIPPING}(?: {_FEE})?(?: (?:must|should|has to|have to|needs to|will|would|may|can|is to|to))?"
            r"(?: costs? (?:\w+ ){0,2}?nothing| (?:must not|should not|does not|will not|mustnt|shouldnt|doesnt|wont)"
            r" cost (?:\w+ ){0,2}?anything| at no (?:extra |additional )?(?:cost|charge)| without (?:any |a )?"
            r"(?:charge|cost|fee))(?= )"
        ),
        "freeShipping",
    ),
    (
        re.compile(
            rf" (?:dont|do not|not|never|wont|will not|no need to|without)(?: \w+){{0,3}}? (?:pay|paying|spend|spending)"
            rf"(?: \w+){{0,2}}? {_SHIPPING}(?= )"
        ),
        "freeShipping",
    ),
    (
        re.compile(
            r" (?:ships?|shipped|deliver|delivers|delivered)(?: \w+)? (?:for free|free of charge|at no(?: extra)? "
            r"(?:cost|charge)|without (?:a |any )?charg(?:e|ing)(?: (?:for|on) (?:shipping|delivery|it))?)(?= )"
        ),
        "freeShipping",
    ),
    (
        re.compile(
            r" (?:cash|pay|paying|payment|payable|paid)(?: \w+){0,3}? (?:on|upon|at|when it|when they|once it) "
            r"(?:delivery|arrival|receipt|arrives|arrive|the door|my door|doorstep|the doorstep|my doorstep)(?= )"
        ),
        "COD",
    ),
    # Paying once the parcel is there: "paying in cash when the parcel arrives", "pay cash when it's delivered".
    (
        re.compile(
            r" (?:cash|pay|paying|payment|payable|paid)(?: \w+){0,2}? (?:when|once|as soon as|after) (?:it|its|they|"
            r"theyre|the \w+|my \w+|the \w+ \w+)(?: is| are| gets| get| has| have)? (?:arrives?|arrived|comes?|"
            r"delivered|reaches (?:me|us|my \w+|our \w+|the \w+)|handed over)(?= )"
        ),
        "COD",
    ),
    # Paying the rider in cash: "cash ko na lang iaabot sa rider", "bayad cash sa rider", "I'll pay the
    # courier when it comes".
    (
        re.compile(
            r"(?<!hindi)(?<! not)(?<! no)(?<! di) (?:cash|bayad|pay|paying|payment|babayaran|bayaran|iaabot|iabot|abot)"
            r"(?: (?!hindi |not |no |di |via |thru |through )\w+){0,4}? (?:sa|to|the|kay)"
            r"(?: \w+)? (?:rider|courier|delivery guy|delivery man|driver)(?= )"
        ),
        "COD",
    ),
    # The seller shoulders the shipping: "sagot ng seller ang shipping", "the seller covers shipping";
    # the buyer doing it ("ako na ang sasagot sa shipping") names no seller.
    (
        re.compile(
            r" (?:sagot|sasagot|shoulders?|covers?|pays?(?: for)?)(?: \w+){0,2}? (?:seller|shop|store)(?: \w+){0,3}? "
            rf"(?<!return )(?:{_SHIPPING}|sf)(?= )"
            rf"| (?:seller|shop|store) (?:shoulders?|covers?|pays?(?: for)?|will (?:shoulder|cover|pay(?: for)?))(?: the)? "
            rf"(?:{_SHIPPING}|sf)(?= )"
            r"| (?:sf|shipping) (?:sagot|shouldered by|covered by|paid by) (?:(?:ni|ng|by) )?(?:the )?(?:seller|shop|store)(?= )"
        ),
        "freeShipping",
    ),
    # Sending it back free: "I can send back without paying for the return", "returns are free".
    (
        re.compile(
            r" (?:send|return|ship)(?: it| them)? back (?:without paying|for free|free of charge|at no cost)"
            r"| without paying for (?:the )?returns?| returns? (?:is|are) free| returns? (?:at no cost|for free)(?= )"
        ),
        "returns",
    ),
    # The seller setting it up: "setting it up must be included at no extra cost", "free setup".
    (
        re.compile(
            r" (?:(?:setting|set|sets)(?: it| them| the \w+)? up|installing(?: it| them| the \w+)?)(?: \w+){0,4}? "
            r"(?:included|for free|free of charge|at no (?:extra |additional )?(?:cost|charge))(?= )"
            r"| (?:free|included|complimentary) (?:set up|setup)(?= )"
        ),
        "installation",
    ),
    # Setting it up costing nothing more: "setup shouldn't cost extra".
    (
        re.compile(
            r" (?:setup|set up|installation|installing it)(?: (?:should|must|will|would))? (?:not|shouldnt|mustnt|wont)"
            r"(?: cost)? (?:extra|anything|a peso|more)(?= )"
        ),
        "installation",
    ),
    # The official store named with its brand ("from the official Xiaomi store", "the official TP-Link
    # shop"), or the brand selling it itself ("sold directly by Xiaomi", not by "a reseller"). The brand's
    # words stay, to be read as the brand, unless the request names it elsewhere (then once is enough).
    (re.compile(r" official (?P<brand>(?:[a-z0-9]+ ){0,2}[a-z0-9]+) (?:store|shop|seller|outlet)s?(?= )"), "official"),
    (
        re.compile(
            r" (?!(?:my|your|his|her|its|their|our|the|a|an|one|ones|seller|sellers|shop|shops) )"
            r"(?P<brand>[a-z0-9]+?)s? own (?:official )?(?:shop|store)(?= )"
            r"| (?:sold|shipped) directly (?:by|from) (?:the )?(?P<brand2>(?!(?:a|an|some|any|one|this|that|seller|"
            r"sellers|shop|shops|store|stores|reseller|resellers|third|local) )[a-z0-9]+)(?= )"
            r"| (?:direct|directly|straight) from the (?:brand|manufacturer|maker)(?= )"
        ),
        "official",
    ),
)
# Words without which no service sentence can match: most requests skip the sentence patterns.
_SERVICE_CUE = re.compile(
    r"ship|deliver|postage|arriv|receipt|door|cash|rider|courier|driver|sagot| sf |official|direct|set|instal|return|"
    r"charg| own "
)


# A service or seller extra the shopper declines is none asked ("no installation needed", "I'll
# install it myself", "no COD", "kahit hindi LazMall"): removed before any is read. A fee declined
# ("no installation fee", "no shipping fee") is the service asked free, so a fee word ends no match.
_DECLINED = re.compile(
    r" (?:no|without|not|hindi|walang|kahit hindi|dont need|do not need|no need for|"
    r"(?:hindi|di) (?:na )?(?:kailangan|need)(?: ng| na| ang)?)(?: \w+)?"
    r" (?:installation|assembly|cod|cash on delivery|lazmall|official store|gift wrap|gift wrapping)"
    r"(?: (?:needed|required|necessary|ok|okay|is fine|please))?(?= )(?! fees?| costs?| charges?)"
    r"| (?:installation|assembly|cod|cash on delivery) (?:is |are )?(?:not|no longer) (?:needed|required|necessary|"
    r"a must|mandatory|a requirement)(?= )"
    # Paying online is COD declined: "no need for cash on delivery, will pay online".
    r"| (?:(?:i )?will |ill )?pay (?:online|via gcash|through gcash|by card|with a card)(?= )"
    r"| (?:ill|i will|well|we will|we can|i can) (?:install|assemble|set up) (?:it|them|this)"
    r"(?: by)? (?:myself|ourselves)(?= )"
)
_DECLINE_CUE = re.compile(r" (?:no|without|not|hindi|di|walang|dont|do not|myself|ourselves|pay) ")


# A seller's service said free after it ("installation free of charge", "assembly for free"): that one
# is free, and "free of charge" alone is no free shipping. Not after "delivery and" / "shipping and":
# "delivery and installation free of charge" makes both free.
_SERVICE_MADE_FREE = re.compile(
    r"(?<!delivery and)(?<!shipping and) (installation|assembly) (?:free of charge|for free)(?= )"
)


def mark_services(padded: str, mark: str | None = None) -> tuple[str, set[str]]:
    """The services a normalised text states, fixed phrases and sentences alike, and the text
    with each replaced: by ``" svc<service> "`` (lower case), or by a space when ``mark`` is None."""
    if _DECLINE_CUE.search(padded):
        padded = _DECLINED.sub(" ", padded)
    if " installation " in padded or " assembly " in padded:
        padded = _SERVICE_MADE_FREE.sub(r" free \1 ", padded)
    found: set[str] = set()
    if _SERVICE_KEY.search(padded):
        padded, applied = _SERVICE_TABLE.replace(
            padded, (lambda service: f" {mark}{service.lower()} ") if mark is not None else (lambda service: " ")
        )
        found.update(_SERVICE_TABLE.pairs[k][1] for k in applied)
    if _SERVICE_CUE.search(padded):
        for pattern, service in _SERVICE_SENTENCES:
            tag = f" {mark}{service.lower()} " if mark is not None else " "
            padded, count = pattern.subn(_kept_brand(tag, padded) if "brand" in pattern.groupindex else tag, padded)
            if count:
                found.add(service)
    return padded, found


def _kept_brand(tag: str, text: str) -> Callable[[re.Match[str]], str]:
    """The service's tag, and the brand the match names where the text names it nowhere else."""

    def replace(found: re.Match[str]) -> str:
        brand = found.group("brand") or found.groupdict().get("brand2")
        if brand and f" {brand} " not in f"{text[: found.start()]} {text[found.end() :]} ":
            return f"{tag}{brand} "
        return tag

    return replace


# --- content words ---------------------------------------------------------------------------

_SPLIT = str.maketrans(
    {**{c: " " for c in string.punctuation.replace("'", "") + "“”‘«»—–…•·€$₱`"}, "'": None, "’": None}
)
# Multi-word and hyphenated synonym entries, joined before the text is split into words.
_JOINED = sorted(
    (
        (f" {w.replace('-', ' ')}{plural} ", f" {c} ")
        for w, c in CANONICAL.items()
        if " " in w or "-" in w
        for plural in ("", "s")
    ),
    key=lambda pair: -len(pair[0]),
)
JOINED_TABLE = PhraseTable(_JOINED)
# "women's" -> "women", "LazMall's" -> "lazmall": a possessive is its noun.
_POSSESSIVE = re.compile(r"['’]s\b")
_CONTRACTION = re.compile(r"(?<=[a-z])['’](?:ll|re|ve|d)\b")
# Words every request uses and that name no constraint: function words, request and shop
# verbs, question frames, generic nouns ("options", "products"), currency, constraint labels
# ("made of", "in the colour ...": the value is the constraint, the label is not).
# Tagalog's frame words too (arena/problems/tagalog.py): Taglish requests frame their ask with them.
# The story's time words ("Now I need a filter for it", "we don't have a stroller yet") last: read as
# content they pulled a request's meaning away from its rewording (development pools: 9 pairs found,
# none lost). Not "again": it cost a never-developed pool a pair.
FRAME_WORDS = (
    frozenset(
        """a an the and or nor of for with without in on at to by from as into onto that which who whose whom what
    where when how why is are am be been being was were it its this these those some any all each every both
    either me i im my mine we us our you your yours he she her his they them their there here one ones
    show find look looking search searching seek seeking want wanted need needed like would could can will
    shall should must may might do does did have has had get give let help please kindly also just only
    really very too so then than but if not no yes ok okay hi hello hey thanks thank
    item items product products thing things stuff something anything option options choice choices
    selection kind kinds type types sort sorts variety piece available availability offer offers offering
    sell sells selling sold carry carries carrying stock stocks stocking provide provides providing
    shop shops store stores seller sellers vendor vendors shopping buy buying purchase purchasing order
    ordering recommend recommendation recommendations suggest suggestion prefer preferably preferred ideally
    priced price prices pricing cost costs costing pay paying php peso pesos money budget range
    lt gt btw
    make made material materials crafted feature featuring features design designed pattern patterned
    style styled look colorway color colour flavor flavour size sized fit fitting version model variant brand branded
    marked described label labelled labeled called named
    good great nice best quality high-quality decent proper suitable perfect right ideal
    go going went come coming see seeing know tell list listing listed following include including
    contain containing containers additionally lastly finally firstly secondly moreover besides while
    interest interested chance philippine through within deal deals promo service services perk perks
    important most many degree degrees haha hehe lol
    benefit benefits option via goal target hope hoping wish id ive ill im dont cant wont next lastly several
    specifically support supports supported supporting compatible
    after hunt hunting lookout love trying try require required requires obtain acquire locate spot grab
    pick happen know anyone someone somebody got wonder wondering searching mind appreciate appreciated
    thanks pls plz kindly hoping interested currently possibly maybe perhaps ideally actually
    first second third fourth fifth sixth between so well anyway oh btw now already still yet""".split()
    )
    | tagalog.FRAME
)
# Words kept as constraints although frame-like: "fit" in "baggy fit" is a value with its adjective;
# these are the few labels official attribute values end with.
_KEEP = frozenset({"fit"})
_STOP = FRAME_WORDS - _KEEP


@lru_cache(maxsize=65_536)
def _lemma(word: str) -> str:
    # simplemma is imported on first use: its English tables load in ~0.2 s.
    import simplemma

    lemma = simplemma.lemmatize(word, lang="en").lower()
    lemma = _american(lemma)
    found = CANONICAL.get(lemma, CANONICAL.get(word))
    if found is None and word.endswith("ng") and word[:-2] in tagalog.GLOSSARY:
        # Tagalog's linker glued to its word: "pinakamalaking planeta" is "pinakamalaki" + "-ng".
        found = CANONICAL.get(word[:-2])
    elif found is None and word.endswith("ng") and word[:-1] in tagalog.GLOSSARY:
        found = CANONICAL.get(word[:-1])  # after an n, "-g": "sabong panligo" is "sabon"
    return lemma if found is None else found


def _american(word: str) -> str:
    """One spelling for British and American forms ("flavour" / "flavor", "centimetre" /
    "centimeter"; "organise" / "organize" is one letter apart, which the comparisons allow): both sides are read through it, so a word it
    respells wrongly ("detour" -> "detor") is respelt alike on both."""
    if len(word) >= 6 and word.endswith("our"):
        return word[:-3] + "or"
    if len(word) >= 5 and word.endswith("tre"):
        return word[:-3] + "ter"
    return word


# A bound written as a sign before an amount.
_SIGN_WORDS = {"<=": "at most", "≤": "at most", "<": "under", ">=": "at least", "≥": "at least", ">": "over"}
_BOUND_SIGNS = re.compile(r"(<=|>=|≤|≥|<|>)\s*(?=(?:₱|php|p)?\s*\d)")
# A cheap test before reading Tagalog numbers: one of their stems, or the currency or count word.
_TAGALOG_NUMBER = re.compile(
    r"\b(?:"
    # A word's start: with the linker a count takes ("tatlong kilo"), and the tens, which no unit begins
    # ("tatlumpung onsa" is 30 ounces: "tatlo" is no prefix of "tatlumpu").
    + alternation(
        "isa dalawa tatlo apat lima anim pito walo siyam sampu labin sandaan sanlibo daan raan libo".split()
        + [*tagalog.TENS]
    )
    + "|"
    + alternation(("piso", "piraso"))
    + "|"
    + alternation(
        {
            *cebuano.UNITS,
            *cebuano.TENS,
            *cebuano.WHOLE,
            *cebuano.HUNDRED,
            *cebuano.THOUSAND_AFTER,
            *regional.UNITS,
            *chavacano.UNITS,
            *chavacano.TENS,
            *chavacano.WHOLE,
        }  # fmt: skip
    )
    + r"\b)"
)
_NOT_A_PESO_OVER = re.compile(  # "not (spending) a single peso more than ₱1,100"
    r"\bnot (?:\w+ )?(?:one|a|a single|even one|even a|1) (?:centavo|cent|peso|sentimo)s? (?:more )?"
    r"(?:over|more than|above|beyond)\b"
)
_SMALL_NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten".split())}
_AND_A_HALF = re.compile(r"\b(\d+|" + "|".join(_SMALL_NUMBERS) + r") and a half (thousand|hundred|k|grand|thou)\b")
_AND_A_HALF_UNIT = re.compile(r"\b(\d+|" + "|".join(_SMALL_NUMBERS) + r") and a half\b")
# "half a grand" is 500, "a grand and a half" 1,500 ("thou": British for a thousand)
_HALF_GRAND = re.compile(r"\bhalf a (?:grand|thou)\b|\ba (?:grand|thou) and a half\b")
# "north of ₱3,000" is over it, "south of" under; only before an amount
_COMPASS = re.compile(
    r"\b(north|south) of(?= (?:₱|php|p)?\s?\d| a (?:grand|thou)\b| (?:one|two|three|four|five|six|seven|eight|nine|ten|"
    r"fifteen|twenty|fifty|a hundred|a thousand)\b)"
)
# an amount said to be the buyer's floor or ceiling: "₱800 is my floor", "₱2k is the ceiling", "16k is the
# most that may be spent", "1,500 is my limit"
_CEILING_IS = re.compile(r"\b(?:my|our|the) (?:ceiling|limit|max|maximum)((?: for(?: [a-z0-9]+){1,5}?)?) is(?= )")
_FLOOR_OR_CEILING = re.compile(
    r"((?:₱|php ?)?\d+(?:\.\d+)?k?)(?: pesos?| php)? is (?:my|the|our) (floor|minimum|starting point|ceiling|limit|max|maximum|"
    r"most(?= (?:that|i|we|you)\b)|least(?= (?:that|i|we|you)\b))\b"
)
# a model's "+" or "Plus" is part of its name ("Galaxy S24+", "iPhone 15 Plus"), not "and"; a count
# ("x2 plus a case") is not a model
_MODEL_PLUS = re.compile(
    r"\b((?:iphone|pixel|galaxy|note|redmi|realme|poco|oppo|vivo|reno|nova|honor|tab|pad) ?\d{1,3}|(?!x\d)[a-z]+\d{1,3}[a-z]?)"
    r"(?: ?\+| plus\b)"
)
# a product's generation, however said: "2nd gen", "second-generation", "gen 2" are "generation 2"
_GENERATION = re.compile(
    r"\b(?:(1st|first)|(2nd|second)|(3rd|third)|(4th|fourth)|(5th|fifth))[- ]gen(?:eration)?\b|\bgen(?:eration)? ?([1-5])\b"
)


def _generation(found: re.Match[str]) -> str:
    number = int(found.group(6)) if found.group(6) else next(k for k, g in enumerate(found.groups()[:5], 1) if g)
    return f"generation {number}"


# a garment's cut, not a count: "one-piece" and "two-piece" swimsuits
_PIECE_CUT = re.compile(r"\b(one|two|1|2)-piece\b")
_FRACTIONS = {"quarter": "25", "half": "50", "fifth": "20", "tenth": "10"}
_GRAND = re.compile(
    r"\b(\d+(?:\.\d+)?|a) (?:grand|thou)\b(?! (?:pianos?|prix|slam|prizes?|canyon|champions?|finale|opening|theft|"
    r"masters?|jury|daughters?|sons?|kids?|children|parents?|mothers?|fathers?|hotel|central|cherokee))"
)
_HALF_UNIT = re.compile(
    r"\b(?:half an?|half|kalahating|kalahati ng)\s+(kilos?|kg|kilograms?|liters?|litres?|litro|gallons?|pounds?|lbs?|"
    r"meters?|metres?|metro|inch|inches|feet|foot)\b"
)
_MAKE_UP_VERB = re.compile(r"\bmakes? up\b(?= (?:a|an|the|our|my|this|that|each|every|one|its|their|his|her)\b)")
_COPY_OF = re.compile(r"\bcopy of (?=(?:this|that|the|his|her|their|its)\b)")
_THIS_NUMBER_OF = re.compile(r"\b(this|that) number of\b")
_SHOPPER_CAPPED = re.compile(
    r"\b(?:(?:i'?m|i am|we'?re|we are)\s+(?:capped|maxed)\s+(?:at|to)|(?:my|our) (?:own )?(?:cap|ceiling|limit) is)\b"
)
# "a quarter-off voucher", "takes a quarter off the bill", "knocks off a fifth of the total": a percent.
_FRACTION_OFF = re.compile(
    r"\b(?:a |one )?(quarter|half|fifth|tenth)[\s-]+off\b|"
    r"\boff (?:a |one )?(quarter|half|fifth|tenth) of (?:the |your |my |our )?"
    r"(?:price|prices|total|bill|order|cart|purchase|amount|subtotal)\b"
)


_AND_HALF_OF_UNIT = re.compile(r"\b([1-9]0*) (?:ug|at) tunga\b")


def _half_of_unit(m: re.Match[str]) -> str:
    """ "1000 ug tunga" is 1500, "200 ug tunga" 250: half of the amount's own unit added."""
    digits = m.group(1)
    unit = 10 ** (len(digits) - 1)
    return _format(int(digits) + unit / 2)


def _and_a_half_of(m: re.Match[str]) -> str:
    word = m.group(1)
    return _format((_SMALL_NUMBERS[word] if word in _SMALL_NUMBERS else float(word)) + 0.5)


def _and_a_half(m: re.Match[str]) -> str:
    whole = _SMALL_NUMBERS.get(m.group(1))
    whole = int(m.group(1)) if whole is None else whole
    return _format((whole + 0.5) * (100 if m.group(2) == "hundred" else 1000))


@lru_cache(maxsize=4096)  # a sentence is read for its words, then again for what it buys (twins._heads)
def _digits(text: str) -> str:
    """Numbers written as words become digits; "1,500" -> "1500", "112.00" -> "112", "1.5k" -> "1500"."""
    from text_to_num import alpha2digit

    if "kalahati" in text:  # "isang libo't kalahati" is a thousand and a half: 1,500
        text = _THOUSAND_AND_A_HALF.sub(r"\1 libo at limang daan", text)
    if _TAGALOG_NUMBER.search(text):  # "siyam na raang piso" is 900 pesos
        text = tagalog.numerals(text)
    if tagalog.BOUND_CUE.search(text):  # "hanggang 250" is up to 250
        text = tagalog.bounds(text)
    if "not " in text and ("centavo" in text or "peso" in text or "cent " in text):
        text = _NOT_A_PESO_OVER.sub("up to", text)  # "not one centavo over ₱900" is at most ₱900
    if "grand" in text or "thou" in text:
        text = _HALF_GRAND.sub(lambda m: "500" if m.group(0).startswith("half") else "1500", text)
    if "north of" in text or "south of" in text:
        text = _COMPASS.sub(lambda m: "over" if m.group(1) == "north" else "under", text)
    if "piece" in text:
        text = _PIECE_CUT.sub(lambda m: "onepiece" if m.group(1) in ("one", "1") else "twopiece", text)
    if "gen" in text:
        text = _GENERATION.sub(_generation, text)
    if "+" in text or " plus" in text:
        text = _MODEL_PLUS.sub(r"\1 plusmodel", text)  # one word, no frame word: "S24+" is not "S24"
    if "<" in text or ">" in text or "≤" in text or "≥" in text:  # "(<₱600)", "total ≤ ₱1,200"
        text = _BOUND_SIGNS.sub(lambda m: f" {_SIGN_WORDS[m.group(1)]} ", text)
    if " and a half " in text:  # "three and a half thousand" is 3500, not 3, a half and 1000
        text = _AND_A_HALF.sub(_and_a_half, text)
        # "one and a half litres" is 1.5 of them
        text = _AND_A_HALF_UNIT.sub(_and_a_half_of, text)
    if "make" in text:  # "how many squares make up a chessboard": no make-up, and no constraint
        text = _MAKE_UP_VERB.sub("are in", text)
    if "copy of" in text:  # "a paperback copy of this novel" is the novel ("a summary of" is not)
        text = _COPY_OF.sub("", text)
    if "number of" in text:  # "with this number of gigabytes": "with this many gigabytes"
        text = _THIS_NUMBER_OF.sub(r"\1 many", text)
    if "capped" in text or "my cap" in text or "our cap" in text:  # "I'm capped at 3k", "my cap is 1.3k": a budget
        text = _SHOPPER_CAPPED.sub("my budget is up to", text)
    if "quarter" in text or "half" in text or "fifth" in text or "tenth" in text:  # "a quarter-off voucher": 25%
        text = _FRACTION_OFF.sub(lambda m: f"{_FRACTIONS[m.group(1) or m.group(2)]} percent off", text)
    if "half" in text or "kalahati" in text:  # "half a kilo", "kalahating litro": 0.5 of the unit
        text = _HALF_UNIT.sub(r"0.5 \1", text)
    if "thousand" in text:  # before text2num, which would read "1.5 thousand" as "1.5 1000"
        text = _THOUSAND.sub(lambda m: _format(float(m.group(1)) * 1000), text)
    if not _NUMBER_WORDS.isdisjoint(text.translate(_SPLIT).split()):  # text is lower-cased
        if "between" in text:
            text = _WORDS_RANGE.sub(lambda m: f"between {alpha2digit(m[1], 'en')} and {alpha2digit(m[2], 'en')}", text)
        if " and " in text:  # "four hundred and nine hundred": two amounts, not 409 and 100
            text = _AMOUNT_AND_AMOUNT.sub(lambda m: f"{m.group(1) or m.group(2)} to ", text)
        # "₱ninety-seven": the symbol must not glue to the number word.
        # The default threshold leaves lone "one" / "two" as words (threshold 0 also turns
        # "chrome os" into "chrome 0"); "two" is mapped below, "one" is no constraint.
        text = _WORD_HYPHEN.sub(r"\1 ", text.replace("₱", "₱ "))  # "twelve-inch" -> "twelve inch"
        if _SPOKEN_PRICE.search(text):
            text = _SPOKEN_PRICE.sub(_spoken_price, text)
        if _SPOKEN_BOUND.search(text):  # "hindi lalagpas ng nine ninety-nine.", "under three fifty"
            text = _SPOKEN_BOUND.sub(lambda m: m.group(1) + _spoken_price(m, 1), text)
        text = alpha2digit(text, "en")
    if "two" in text:
        text = _TWO.sub("2", text)
    if "one" in text:  # "a one-year warranty" is a 1-year one; a lone "one" stays no constraint
        text = _ONE_UNIT.sub("1", text)
    if "grand" in text or "thou" in text:  # "under 3 grand", "less than a grand": thousands (a grand piano is not)
        text = _GRAND.sub(lambda m: _format(1000 * (1 if m.group(1) == "a" else float(m.group(1)))), text)
    if "p" in text:
        text = _GLUED_CURRENCY.sub("php ", text)
    if "," in text:
        text = _THOUSANDS.sub("", _DECIMAL_COMMA_K.sub(r"\1.\2k", text))  # "1,5k" is 1.5k, "1,500" 1500
    if "₱" in text or "php" in text:
        text = _SPACED_THOUSANDS.sub(r"\1\2", text)  # "₱1 500" is ₱1500
    if "mah" in text:
        text = _SPACED_MAH.sub(r"\1\2", text)  # "20 000 mAh" is 20000 mAh
    if ".0" in text:
        text = _TRAILING_ZEROS.sub("", text)
    if "dozen" in text:
        text = _DOZENS.sub(lambda m: _format(float(m.group(1)) * 12), text)  # "two dozen" (2 dozen) is 24
        text = text.replace("half a dozen", "6").replace("a dozen", "12").replace("dozen", "12")
    if "k" in text:
        text = _KILO.sub(lambda m: _format(float(m.group(1)) * 1000), text)
    if "tunga" in text:  # Cebuano "usa ka libo ug tunga": a thousand and a half, 1500
        text = _AND_HALF_OF_UNIT.sub(_half_of_unit, text)
    if " is " in text and any(
        w in text for w in ("floor", "minimum", "ceiling", "limit", "max", "most", "least", "start")
    ):
        # "my ceiling is 2.5k", "my limit for all three is ...": what it is for stays said
        text = _CEILING_IS.sub(
            lambda m: (
                " each at most " if " each" in m.group(1) else " at most " if not m.group(1) else " in all at most "
            ),
            text,
        )
        text = _FLOOR_OR_CEILING.sub(
            lambda m: (
                ("at least " if m.group(2) in ("floor", "minimum", "starting point", "least") else "at most ")
                + m.group(1)
            ),
            text,
        )
    return text


_DIGIT_WORDS = "one two three four five six seven eight nine".split()
_TENS_WORDS = (
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty "
    "sixty seventy eighty ninety".split()
)
# A price said the way it is spoken, hundreds and the rest as two numbers: "one fifty off" is 150,
# "two fifty pesos" 250, "nine ninety nine" 999. Only before a money word: "one twenty-inch" is not.
# The hundreds may be a teen: "twelve fifty" is 1,250, "fifteen ninety-nine" 1,599.
_HUNDREDS_WORDS = _DIGIT_WORDS + _TENS_WORDS[:10]
_SPOKEN_PRICE = re.compile(
    rf"\b({'|'.join(_HUNDREDS_WORDS)}) ({'|'.join(_TENS_WORDS)})(?:[ -]({'|'.join(_DIGIT_WORDS)}))?"
    r"(?= (?:off|pesos?|php|bucks|discount|budget|max|maximum|only|each|or less|or more|at most|lang)\b)"
)


# ... or after a bound or a voucher's term, wherever it ends: "under three fifty.", "wag lalagpas ng nine
# ninety-nine", "capped at one-eighty".
_SPOKEN_BOUND = re.compile(
    r"\b((?:under|below|max|maximum|up to|hanggang|lalagpas ng|lalampas ng|lampas ng|less than|not more than|"
    r"within|budget|at most|around|about|"
    # a voucher's terms: "capped at one-eighty", "min nine ninety-nine", "takes off one-twenty when you hit ..."
    r"capped at|cap of|cap at|cap|min|minimum|min spend|minimum spend|min order|minimum order|off|spend|"
    rf"reach|hit|over|above|at least) )({'|'.join(_HUNDREDS_WORDS)}) ({'|'.join(_TENS_WORDS)})"
    rf"(?:[ -]({'|'.join(_DIGIT_WORDS)}))?(?![\w-])"
    # a size is no price: "at least one twenty-inch screen" is one screen of 20 inches
    r"(?! (?:inch|inches|in|cm|mm|m|kg|g|l|ml|liters?|litres?|gb|tb|w|watts?|pieces?|pcs|pc|seater|piece)\b)"
)
_THOUSAND_AND_A_HALF = re.compile(r"\b(\w+) libo(?:'t| at) kalahati\b")


def _spoken_price(found: re.Match[str], shift: int = 0) -> str:
    hundreds = _HUNDREDS_WORDS.index(found.group(1 + shift)) + 1
    tens = _TENS_WORDS.index(found.group(2 + shift))
    rest = tens + 10 if tens < 10 else (tens - 8) * 10
    rest += _DIGIT_WORDS.index(found.group(3 + shift)) + 1 if found.group(3 + shift) else 0
    return str(hundreds * 100 + rest)


def _format(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


# --- the ask ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ask:
    """A problem's canonical constraint set. ``text_key`` hashes the text part; the reward
    part (``reward``, ``voucher``, ``fact``) is None for a query-only problem.

    A slotted dataclass, not a pydantic model: the guard builds one per problem (100k in
    the benchmark) from values it made itself, so validation would only cost time and memory.
    """

    concepts: tuple[str, ...]  # sorted set of canonical content words of the request
    numbers: tuple[str, ...]  # sorted multiset of the request's numbers
    directions: tuple[str, ...]  # sorted set of price directions stated ("gt", "lt", "btw")
    services: tuple[str, ...]  # sorted set of services stated in the text
    voucher_text: tuple[str, ...]  # the voucher sentences' terms: scope, kind, sorted numbers
    tokens: tuple[str, ...]  # the request's words in order (for the text sketch)
    reward: str | None = None  # digest of the gold constraints, gold ids and titles left out
    voucher: str | None = None  # digest of the reward's voucher terms
    fact: str | None = None  # the knowledge answer, lower-cased
    # A shop task's sentences (its sub-requests), each as its sorted concepts and numbers:
    # "a red mug; a blue plate" and "a blue mug; a red plate" share one bag of words.
    items: tuple[tuple[str, ...], ...] = ()

    @property
    def query_only(self) -> bool:
        return self.reward is None and self.voucher is None and self.fact is None

    def text_key(self) -> str:
        """Equal for two texts that state the same constraints, whatever their wording. Price
        directions and services are left out: :func:`asks_agree` compares them where a reward
        does not state them exactly."""
        parts = (self.concepts, self.numbers, self.voucher_text)
        return hashlib.sha256(orjson.dumps(parts)).hexdigest()


_WITH_SLASH = re.compile(r"\bw/(?!o)\s*")
_WITHOUT_SLASH = re.compile(r"\bw/o\b\s*")
_DEGREES = re.compile(r"\s?(?:°\s?|\bdegrees? )([fc])\b|\s?[℉℃]")
_USED = re.compile(r"\b(?:pre[- ]?owned|second[- ]?hand)\b")


def _split_units(text: str) -> list[str]:
    text = _BULLET.sub("\n", text)
    units = [unit.strip() for unit in _UNITS.split(text) if unit and unit.strip()]
    if "?" not in text:
        return units
    # A label asked and answered ("Shipping? On the seller.", "Budget? ₱500."): one sentence.
    joined: list[str] = []
    for unit in units:
        if joined and _LABEL_ASKED.fullmatch(joined[-1]):
            joined[-1] = f"{joined[-1]} {unit}"
        else:
            joined.append(unit)
    return joined


_LABEL_ASKED = re.compile(r"[A-Za-z][\w-]*\?")


_SZ = re.compile(r"\bsz\b")
_BAKAL_BUY = re.compile(r"\bbakal(?= (?:ako|ko|kami|mi|kita|ta|kamo|sila|siya|sang|ka)\b)")


def _normalised(unit: str) -> str:
    """Lower case, numbers as digits, "5-10" as "5 to 10", punctuation split off (a decimal point kept)."""
    text = _digits(unit.lower()).replace("%", " percent ")
    if "w/" in text:  # "cap w/ embroidery": "with", whose slash the split below would strand
        text = _WITHOUT_SLASH.sub("without ", _WITH_SLASH.sub("with ", text))
    if "°" in text or "℉" in text or "℃" in text or " degrees " in text:  # "in °F" is "in fahrenheit"
        text = _DEGREES.sub(
            lambda m: " fahrenheit " if m.group(1) == "f" or m.group(0).endswith("℉") else " celsius ", text
        )
    if "bakal" in text:  # Hiligaynon's "bakal ako sang ...": buying; Tagalog's "bakal na kaldero" is steel
        text = _BAKAL_BUY.sub("buy", text)
    if "sz" in text:  # "sz L": "size", before the size letter is read
        text = _SZ.sub("size", text)
    if "owned" in text or "hand" in text:  # one word for a used item, which the split would cut in two
        text = _USED.sub("used", text)
    if "-" in text or "–" in text or "—" in text:
        text = _DASH_RANGE.sub(r"\1 to ", text)
    if "'" in text or "’" in text:
        text = _CONTRACTION.sub("", _POSSESSIVE.sub("", text))  # "he'll" is "he", never "hell"
    if "." in text:
        text = _DECIMAL_POINT.sub("\x00", text)
    text = text.translate(_SPLIT).replace("\x00", ".")
    return " " + " ".join(text.split()) + " "


class Split(NamedTuple):
    """A problem's query as both readers take it: without hesitations and emoji (:func:`plain`), and
    cut into its request and voucher sentences (:func:`split_request`)."""

    query: str
    request: tuple[str, ...]
    voucher: tuple[str, ...]


def split_problem(problem: Problem) -> Split:
    """Split once, read twice: the clustering reads every problem's ask, then its request, and the
    split is a third of what each reading costs."""
    query = plain(problem.query)
    return Split(query, *split_request(query, problem.intent))


def read_ask(problem: Problem, split: Split | None = None) -> Ask:
    """The problem's :class:`Ask` (see the module docstring for what is read from where)."""
    text_part = _read_text(problem.query, problem.intent, split)
    reward = voucher = fact = None
    if problem.knowledge is not None:
        fact = " ".join(problem.knowledge.knowledge_attribute.lower().split())
    elif problem.rewards:
        items = sorted(orjson.dumps(_constraints_only(r)) for r in problem.rewards)
        reward = hashlib.sha256(b"\n".join(items)).hexdigest()
    if problem.voucher is not None:
        v = problem.voucher
        terms = (v.voucher_type, v.threshold, v.discount_type, v.face_value, v.discount, v.cap, v.budget)
        voucher = hashlib.sha256(orjson.dumps([None if t is None else str(t) for t in terms])).hexdigest()
    return replace(text_part, reward=reward, voucher=voucher, fact=fact)


def _constraints_only(reward) -> dict:
    canonical = canonical_reward(reward)
    canonical.pop("product_id")
    canonical.pop("title")
    return canonical


# What the buyer had before, broken, told anywhere in a sentence ("Hiking season is starting, and my old
# plastic bottle cracked on the last trail"): its material or colour is no constraint of the new one.
_OLD_ONE_BROKE = re.compile(
    r"\b(?:my|our) (?:old|previous|last|current|former)(?: [\w.'-]+){1,3}? (?:broke|cracked|died|stopped|gave up|gave out|"
    r"wore out|tore|ripped|leaked|leaks|is broken|was broken|got lost|went missing|finally)\b",
    re.IGNORECASE,
)


# ... unless the sentence goes on to the new one: "My old 1.8L one broke, so same capacity.", "so a 2.2L one".
_SAME_AGAIN = re.compile(
    r"\b(?:same|again|like it|like that|like the old|this time|so (?:a|an|the|now|i|we|this|get|make))\b", re.IGNORECASE
)


def _unit_kind(unit: str, voucher_possible: bool) -> str:
    """voucher, context or request: what one sentence of a paragraph does."""
    if voucher_possible and _VOUCHER_CUE.search(unit):
        return "voucher"
    if _OLD_ONE_BROKE.search(unit) and _SAME_AGAIN.search(unit):
        return "request"  # the old one's size or brand asked again
    if (
        (
            _NARRATIVE.match(unit)
            or _small_talk(unit)
            or _exclaimed(unit)
            or _earlier_order(unit)
            or _OLD_ONE_BROKE.search(unit)
        )
        and not _asks(unit)
        and not _service_in(_normalised(unit))
        and not _bounds_a_price(unit)
    ):
        return "context"
    return "request"


def _bounds_a_price(unit: str) -> bool:
    """A sentence that bounds the price is the request's, however it opens ("I won't go over fifteen
    thousand", "I'd spend under nine hundred")."""
    padded = f" {_normalised(unit).strip()} "
    return any(
        phrase in padded and _AMOUNT_AFTER.match(padded, padded.index(phrase)) is not None
        for phrase, _ in _PRICE_PHRASES
    )


_AMOUNT_AFTER = re.compile(r".{0,40}?\d")


# Small talk, in English or Taglish: a greeting, thanks, an exclamation, a word to the reader, or a
# sentence built on Tagalog's function words. A request fragment ("Stainless steel.", "Cotton lang.",
# "For my dad.") has none of these, or states a number; a Tagalog request ("Hanap ako ng ...",
# "Kailangan ko ng ...") asks, and asking wins.
_SMALL_TALK = re.compile(
    r"\b(?:hi|hello|hey|good (?:morning|afternoon|evening|day)|thanks|thank you|thx|salamat|haha\w*|hehe\w*|lol|"
    r"wow|yay|omg|ugh|grabe|cheers|appreciate|lifesaver|wish me luck|hope|excited|exciting|can'?t wait|"
    r"merry christmas|happy (?:birthday|holidays|new year|fiesta)|congrat\w*|god bless|take care|"
    # British and Australian greetings and thanks: "Morning all!", "G'day!", "Ta!", "Hiya"
    r"(?:morning|evening|afternoon) (?:all|everyone|folks)|g'?day|ta(?=\s*(?:[!.]|$))|hiya|"
    r"you|you'?re|your|yours)\b",
    re.IGNORECASE,
)
_STATES_A_NUMBER = re.compile(
    r"\d|\b(?:"
    + "|".join(
        "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand".split()
    )
    + r")\b",
    re.IGNORECASE,
)


def _exclaimed(unit: str) -> bool:
    """An exclamation that states nothing: "Movie marathon with my barkada this weekend!", "Excited
    na ko!". One that adds or insists ("Must be waterproof!", "Plus a pail!", "Hanabishi sana!") or
    names something ("From Spain!") is a request: a number, a name or an adding word keeps it."""
    if not unit.rstrip().endswith("!") or _STATES_A_NUMBER.search(unit) or len(unit.split()) < 3:
        return False
    words = re.findall(r"[\w'-]+", unit)
    if any(w[:1].isupper() and k > 0 and w != "I" and w.lower() not in _CALENDAR for k, w in enumerate(words)):
        return False
    return _INSISTS.search(unit) is None


_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december christmas pasko".split()
)
_INSISTS = re.compile(
    r"\b(?:must|should|need|needs|want|wants|plus|also|only|lang|sana|dapat|gusto|from|with a|and a|make it|"
    r"no|not|without|prefer\w*|has to|have to)\b",
    re.IGNORECASE,
)


def _small_talk(unit: str) -> bool:
    if _STATES_A_NUMBER.search(unit) or tagalog.ASKS.search(unit):
        return False
    if _SMALL_TALK.search(unit):
        return True
    return sum(word in tagalog.FUNCTION for word in re.findall(r"[a-z]+", unit.lower())) >= 2


# A story told in the asking sentence's first clause ("My cat keeps destroying the sofa so please
# show me ..."): the clause before "so" is context when it would be one as a sentence.
_STORY_SO = re.compile(
    r",?\s+(?:so|kaya)\s+(?=(?:(?:this time|now|today),?\s+)?(?:please|pls|can you|could you|i need|i want|need|"
    r"i'?m looking|i am looking|i'?m after|i am after|we'?re after|i'?d like|i would like|we'?d like|we need|we want|"
    r"i'?ll need|i have to|time to|show|find|help|get|"
    r"look|naghahanap|hanap|gusto|kailangan|bibili|bumili|pa-order)\b)",
    re.IGNORECASE,
)


# An earlier order told before the new one ("The seller sent the red one.", "Size M was too tight last
# order.", "Reorder, size M was too tight: ...", "(they sent black before)"): the value it names is what
# went wrong, not what is asked. "I wanted yellow" is not one: it states the ask.
_EARLIER_ORDER = re.compile(
    r"\b(?:(?:seller|shop|store|they|courier|rider)\s+(?:sent|shipped|delivered|gave)|"
    r"(?:last|previous|first|earlier|old|past)\s+(?:order|seller|purchase|parcel|delivery)|"
    r"re-?order(?:ed|ing)?|(?:I|we)\s+(?:had\s+to\s+)?returned?|returned\s+it|^\s*returned\s+(?:my|the|our)|"
    r"(?:was|were)\s+(?:too\s+\w+|wrong|defective|broken|damaged|expired|fake|missing|the wrong)|"
    r"(?:came|arrived)\s+(?:already\s+)?(?:broken|damaged|wrong|late|expired|defective|with\s+a|from\s+a|"
    r"in\s+\w+\s+parcels)|last\s+time|the\s+(?:last|previous|first|old)\s+one|wrong\s+item|"
    r"(?:overheated|leaked|peeled\s+off|faded)|sent\s+(?:the\s+)?(?:wrong|\w+\s+\w+\s+)?instead)\b",
    re.IGNORECASE,
)
# A word every one of those tells has: a substring test before the search.
_EARLIER_CUES = ("sent", "ship", "deliver", "gave", "last", "previous", "first", "earlier", "old", "past", "order",
                 "return", "came", "arrived", "time", "wrong", "overheat", "leak", "peel", "fade", "too", "instead")  # fmt: skip


@lru_cache(maxsize=4096)  # a sentence is asked of twice: is it context, where does its story end
def _earlier_order(text: str) -> bool:
    lower = text.lower()
    return any(cue in lower for cue in _EARLIER_CUES) and _EARLIER_ORDER.search(text) is not None


# Where a sentence's story ends and its request begins: a colon or a dash.
_STORY_END = re.compile(r"\s*(?::|\s[—–-])\s+")


def _story_cut(unit: str) -> tuple[str | None, str]:
    """(the story clause, the rest) of a sentence that opens with a story before its request."""
    ended = _STORY_END.search(unit) if _earlier_order(unit) else None
    if ended is not None and _earlier_order(unit[: ended.start()]) and not _asks(unit[: ended.start()]):
        return unit[: ended.start()], unit[ended.end() :]
    # ... or told after it ("... one shop only pls, the previous cleanser came expired").
    last = next(reversed(list(_STORY_END.finditer(unit))), None) if ended is not None else None
    if last is not None:
        tail = unit[last.end() :]
        clause = tail.rsplit(",", 1)[-1] if _earlier_order(tail.rsplit(",", 1)[-1]) else tail
        if _earlier_order(clause) and not _asks(clause):
            return clause, unit[: len(unit) - len(clause)].rstrip(" ,")
    found = _STORY_SO.search(unit)
    if found is None:
        return None, unit
    head, tail = unit[: found.start()], unit[found.end() :]
    if _unit_kind(head, False) == "context":
        return head, tail
    return None, unit


def _asked_back(unit: str) -> bool:
    """A question of frame words only ("Which one is that?", "What is it called?"): no request by
    itself. (Any sentence of frame words, "Can you help." too, pulled stories in: 9 false pairs on the
    development pools.)"""
    return unit.rstrip().endswith("?") and all(w in FRAME_WORDS for w in re.findall(r"[a-z']+", unit.lower()))


# Within a sentence that names the voucher: a clause stating a term ("cap 350", "7 percent off",
# "all products", "only for the same shop") rather than the product.
_TERM_WORDS = re.compile(
    r"\b(?:cap|caps|max|maximum|min|minimum|off|percent|ceiling|limit|over|above|exceeds?|spend|total|"
    r"orders?|purchases?)\b|%",
    re.IGNORECASE,
)
_SCOPE_WORDS = re.compile(
    r"\b(?:all|any|every|each) (?:products?|items?|shops?|stores?)\b|\b(?:same|one|single) (?:shop|store|seller)\b|"
    r"\bplatform\b|\beverywhere\b|\bsitewide\b",
    re.IGNORECASE,
)


_BUDGET_FOR = re.compile(r"(?:my |our |a |total )?budget (?:is |of )?\S+(?: pesos?| php)? for (.+)$", re.IGNORECASE)


_HAS_LETTER = re.compile(r"[^\W\d_]")
_BARE_BOUND = re.compile(
    r"(?:up to|at most|max(?:imum)?(?: of)?|to a max(?:imum)? of|no more than|not more than)\s+(?:₱|php\s*|p)?"
    r"(?:[\d.,]+\s*k?|(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty|"
    r"seventy|eighty|ninety|hundred|thousand|[\s-])+)(?:\s*(?:pesos?|php))?\s*[.!?]?$",
    re.IGNORECASE,
)


def _voucher_clause(clause: str) -> bool:
    if _VOUCHER_CUE.search(clause) or _SCOPE_WORDS.search(clause):
        return True
    return (
        _TERM_WORDS.search(clause) is not None
        and _STATES_A_NUMBER.search(clause) is not None  # "min one thousand", "capped at 250"
    )


def _asks_something(text: str) -> bool:
    return _asks(text) or _service_in(_normalised(text))


def _asks(text: str) -> bool:
    text = text.lower()
    return _REQUEST_CUE.search(text) is not None or _REQUEST_CUE_MORE.search(text) is not None


def _service_in(padded: str) -> bool:
    return bool(mark_services(padded)[1])


# Joins the request's sentences in one normalised text and splits them apart again after.
_UNIT_MARK = "zqunitqz"


@lru_cache(maxsize=1024)  # a request is read twice, split then read (the recent ones suffice)
def plain(query: str) -> str:
    """``query`` without hesitations ("uhm", "hmm"), emoji and pictographs: "🎧", "🇵🇭", "✨", "🙏🏽" say nothing a request asks,
    and read as words they would stand in for words the other side changed. Each becomes a space (a
    glued "dryer💇" stays "dryer"); its joiners and variation selectors go ("1️⃣" is "1"). Letters of
    any script (their accents dropped), currency signs, bound signs and degrees stay."""
    if _FILLER.search(query):
        query = _FILLER.sub(" ", query)
    if _relayed(query):
        query = _RELAYED.sub(" ", query)
    query = _sent_home(query)
    if "(" in query:
        query = _EARLIER_ASIDE.sub(lambda found: " " if _earlier_order(found.group(0)) else found.group(0), query)
    lower = query.lower()
    if "for h" in lower or "-ear" in lower:
        query = _WHO_FOR.sub(lambda found: _AUDIENCE[found.group(1).lower()], query)
        query = _EAR_FIT.sub(lambda found: f"{found.group(1)}ear", query)
    if (
        "afford" in lower
        or "too " in lower
        or "sobra" in lower
        or "kaya" in lower
        or "budget" in lower
        or "bulsa" in lower
        or "ayoko" in lower
        or "ayaw ko" in lower
        or " no" in lower
        or "question" in lower
    ):
        query = _REFUSED_FLOOR.sub(r"under \1", query)
    if query.isascii():
        return query
    # Accents are typed or not ("Noli Me Tángere" / "Tangere", "L'Oréal" / "L'Oreal"): letters are
    # decomposed and their marks dropped.
    return "".join(_symbol(ch) if not ch.isascii() else ch for ch in unicodedata.normalize("NFD", query))


# Hesitations a speech-to-text request keeps ("uhm gloves na disposable", "hmm, the bigger one"): they ask
# nothing, and an unknown lower-case word would read as a name.
_FILLER = re.compile(r"(?<![\w'-])(?:u+h*m+|u+h+|h+m+|e+r+m+|a+h+|e+h+)(?![\w'-])", re.IGNORECASE)
# Who a request is relayed for, said by a personal shopper or a shop's agent ("My client wants ...",
# "Customer is asking for ...", "Order for Ma'am Liza: ..."): the one who buys, not what is bought. A
# person's name after a title ("Ma'am Joy", "for Tita Nena") would read as a brand ("Joy" is one). A
# shop's agent says "Ma'am" to a customer; "Tita", "Ate" and "Kuya" also name home brands ("Tita Beng's
# ube halaya") and a riddle's nicknames ("Ate Vi"), so those only where the request is relayed ("for
# Tita Nena", "Kuya Ben wants ...", "For Sir Mark: ..."), as "Sir" and "Miss", which a riddle also says
# ("Sir Isaac Newton", "Miss Universe").
_RELAYED = re.compile(
    r"\b(?:(?:my|our|the|a|this|another|your)\s+)?(?:client|customer|buyer)(?:'s|s'|s)?\b(?:\s+(?:is|was)\s+"
    r"(?:asking|looking)\s+for\b|\s+(?:asks|asked)\s+for\b|\s+request(?:s|ed)?\b)?|"
    r"(?<![\w'\"‘“])(?:ma'?am|mam|madam)\.?\s+(?-i:[A-Z][a-z-]+)(?:'s)?(?!['\w])|"
    r"(?<=\bfor\s)(?:tita|tito|ate|kuya|sir|mr|mrs|ms|miss)\.?\s+(?-i:[A-Z][a-z-]+)(?:'s)?(?!['\w])|"
    r"(?<![\w'\"‘“])(?:tita|tito|ate|kuya|sir|mr|mrs|ms|miss)\.?\s+(?-i:[A-Z][a-z-]+)(?=:|\s+(?:wants|needs|asked|asks|"
    r"is asking|is looking|messaged|said|ordered|would like)\b)",
    re.IGNORECASE,
)
# The words without which ``_RELAYED`` cannot match: a substring test is a tenth of its search.
_RELAY_WORDS = ("client", "customer", "buyer", "ma'am", "mam ", "madam", "tita ", "tito ", " ate ", "kuya ",
                "sir ", " mr", " ms", "miss ")  # fmt: skip


def _relayed(query: str) -> bool:
    lower = f" {query.lower()}"
    return any(word in lower for word in _RELAY_WORDS) and _RELAYED.search(query) is not None


# A gift "for her" or "for him" (the phrase ending there: not "for her school") is for women or men.
_WHO_FOR = re.compile(r"\bfor (her|him|HER|HIM|Her|Him)(?=\s*(?:[,.;:!?)—–-]|$))")
_AUDIENCE = {"her": "for women", "him": "for men"}
# How headphones sit: "over-ear", "on-ear", "in-ear" are three fits, not the words "over", "on", "in".
_EAR_FIT = re.compile(r"\b(over|on|in)-ear\b", re.IGNORECASE)
# An amount and up that the buyer cannot pay is the most they pay: "₱28k pataas, hindi ko na afford",
# "₱3,000 and up is already too much".
_REFUSED_FLOOR = re.compile(
    r"((?:₱|php\s?|p)?\s?\d[\d,.]*\s?k?|\b(?:a|one|two|three|four|five|six|seven|eight|nine|ten) (?:hundred|thousand))"
    r"(?:\s?(?:pesos?|php))?\s+(?:pataas|and up|and above|or more|up)\b[\s,]*"
    r"(?:is\s+|are\s+)?"
    r"(?:already\s+|na\s+)?(?:hindi ko na afford|hindi ko afford|di ko na afford|di ko afford|too much|too pricey|"
    r"too expensive|over my budget|out of my budget|beyond my budget|sobra na|sobrang mahal|lampas na sa kaya ko|"
    r"hindi ko na kaya|di ko na kaya|hindi ko kaya|di ko kaya|masakit na sa bulsa|ayoko na|ayaw ko na|"
    r"a no for me|a no-go|a no go|a hard no|out of the question)",
    re.IGNORECASE,
)


# A parenthesised aside: dropped when it tells of an earlier order ("(they sent black before)").
_EARLIER_ASIDE = re.compile(r"\([^()]*\)")


# --- a request sent home from abroad -----------------------------------------------------------
# Many shoppers on a Philippine marketplace work abroad and order for family at home: they say where
# the parcel goes ("for my Nanay in Laoag, Ilocos Norte", "pa-deliver sa Naga", "Deliver to Tacloban
# City:"), where they work ("From Jeddah, 5 years here", "Kuwait OFW", "dito sa Riyadh") and the
# price in that country's money beside the peso figure ("around 25 dollars so max ₱1,400"). None of
# it is what is bought, and a place would read as a brand. A place is only dropped in those frames:
# a product's origin ("dried mangoes from Guimaras"), a seller's ("a seller in Cebu") and a riddle's
# place ("the tallest building in Dubai") are asked.

# A place as written: capitalised words ("Cagayan de Oro", "Sta. Rosa", "QC"), then a province after a
# comma ("Laoag, Ilocos Norte") where the province ends the phrase (not "in Laoag, Kyowa rice cooker").
_WORD = r"(?-i:(?:Sta|Sto|St|Mt|Gen)\.|[A-Z][\w'-]*)"
_PLACE = (
    rf"(?P<place>{_WORD}(?:\s+(?:de|del|de la|{_WORD})){{0,2}}"
    rf"(?:,\s*{_WORD}(?:\s+{_WORD})?(?=\s*(?:[,.;:!?()\-–—]|$)))?)"
)

# The provinces of the Philippines (and Metro Manila), for a town named with its province.
_PROVINCES = (
    r"Abra|Agusan del Norte|Agusan del Sur|Aklan|Albay|Antique|Apayao|Aurora|Basilan|Bataan|Batanes|Batangas|"
    r"Benguet|Biliran|Bohol|Bukidnon|Bulacan|Cagayan|Camarines Norte|Camarines Sur|Camiguin|Capiz|Catanduanes|"
    r"Cavite|Cebu|Cotabato|Davao de Oro|Davao del Norte|Davao del Sur|Davao Occidental|Davao Oriental|"
    r"Dinagat Islands|Eastern Samar|Guimaras|Ifugao|Ilocos Norte|Ilocos Sur|Iloilo|Isabela|Kalinga|La Union|"
    r"Laguna|Lanao del Norte|Lanao del Sur|Leyte|Maguindanao|Marinduque|Masbate|Misamis Occidental|"
    r"Misamis Oriental|Mountain Province|Negros Occidental|Negros Oriental|Northern Samar|Nueva Ecija|"
    r"Nueva Vizcaya|Occidental Mindoro|Oriental Mindoro|Palawan|Pampanga|Pangasinan|Quezon|Quirino|Rizal|"
    r"Romblon|Samar|Sarangani|Siquijor|Sorsogon|South Cotabato|Southern Leyte|Sultan Kudarat|Sulu|"
    r"Surigao del Norte|Surigao del Sur|Tarlac|Tawi-Tawi|Zambales|Zamboanga del Norte|Zamboanga del Sur|"
    r"Zamboanga Sibugay|Metro Manila"
)
# Who a parcel is for: kin (in the languages shoppers mix in) and the people one buys for.
_KIN = (
    r"nanay|tatay|inay|itay|nanang|tatang|inang|amang|apu|apong|apo|ima|lolo|lola|lelong|lelang|kuya|ate|"
    r"manong|manang|ading|bunso|pamangkin|tito|tita|tiyo|tiya|ninong|ninang|inaanak|palangga|inday|atsi|"
    r"mama|papa|mommy|daddy|mom|mum|mother|dad|father|parents|son|daughter|wife|husband|misis|mister|"
    r"brother|sister|siblings?|cousin|nephew|niece|grand\w+|family|friend|kids?|child|children|baby|"
    r"girlfriend|boyfriend|partner|in-laws|relatives|folks|godchild|godson|goddaughter|anak|asawa|utod|igsoon|manghod"
)
_PERSON = (
    rf"(?:my|our|ni|kay|kina|for|para\s+(?:sa|kay)|si)\s+(?:(?:older|younger|little|big|eldest|youngest|"
    rf"dear|retired|beloved|elderly|only)\s+)?(?:{_KIN})(?:\s+(?-i:[A-Z][a-z]+))?(?:\s+ku)?"
    r"(?:'s\s+[\w-]+(?:\s+[\w-]+)?)?"
)
# Where the buyer works: for "From X," and "X OFW" only these (a sentence may open "From Samsung, ...").
_ABROAD = (
    r"Dubai|Abu Dhabi|Sharjah|Al Ain|UAE|Riyadh|Jeddah|Dammam|Al Khobar|Khobar|Saudi(?: Arabia)?|KSA|Kuwait|"
    r"Doha|Qatar|Bahrain|Manama|Oman|Muscat|Hong Kong|HK|Macau|Singapore|SG|Taiwan|Taipei|Kaohsiung|Taichung|"
    r"Japan|Tokyo|Osaka|Nagoya|Korea|Seoul|Busan|Malaysia|Kuala Lumpur|KL|Brunei|Israel|Tel Aviv|Italy|"
    r"Rome|Milan|UK|London|Canada|Toronto|Vancouver|Calgary|Winnipeg|Australia|Sydney|Melbourne|Perth|"
    r"New Zealand|Auckland|USA|US|the States|California|New York|Texas|Guam|Hawaii|Germany|Cyprus|Lebanon|"
    r"Jordan"
)
# Each frame with the words it cannot match without (a set lookup is far cheaper than the search).
_DELIVERY_WORDS = frozenset("deliver delivery delivered ship shipped send sent padala ipadala ipapadala".split())
_PROVINCE_WORDS = frozenset(_PROVINCES.lower().replace("|", " ").split()) - {"del", "de", "norte", "sur", "islands"}
_KIN_WORDS = frozenset(_KIN.replace("?", "").replace("|", " ").split()) | {"siblings", "kid"}
_ABOUT_ME = frozenset("here dito andito nandito working work living live stuck staying been m am ako kami".split())
_AWAY = frozenset("year years yr yrs month months taon buwan christmas pasko".split())
_ABROAD_WORDS = frozenset(_ABROAD.lower().replace("|", " ").split()) - {"us", "the"}  # "help us find"
_OFW = frozenset({"ofw", "ofws"})
_SENT_HOME = tuple(
    (cues, re.compile(pattern, re.IGNORECASE))
    for cues, pattern in zip(
        (
            _DELIVERY_WORDS,
            frozenset({"delivery"}),
            _PROVINCE_WORDS,
            _KIN_WORDS,
            _ABOUT_ME,
            _AWAY,
            _AWAY,
            _ABROAD_WORDS,
            _ABROAD_WORDS,
            _OFW,
        ),
        (
            # where the parcel goes
            rf"\b(?:pa-?deliver|i-?deliver|deliver(?:ed|y)?|ship(?:ped)?|send|sent|padala|ipadala|ipapadala)\s+"
            rf"(?:(?:it|po|this|them|na)\s+)?(?:to|sa|kay\s+\w+\s+sa)\s+{_PLACE}",
            rf"(?:^|(?<=[.:;!?,(—–-]))\s*(?!(?i:free|same|next|fast|express|home|door|cash|standard|local)\b){_PLACE}"
            r"(?=\s+delivery\b)",
            # a town and its province after "for" ("20L microwave for Calamba, Laguna"; not "for PS5, Midnight
            # Black")
            rf"\b(?:for|to|sa)\s+(?P<place>{_WORD}(?:\s+{_WORD})?,?\s*(?:{_PROVINCES}))(?=\s*(?:[,.;:!?()\-–—]|$))",
            # where the one it is for lives
            rf"\b{_PERSON}(?:\s+[a-z][\w-]*){{0,3}}?\s+(?:in|sa|at|nasa|from|taga)\s+{_PLACE}",
            # where the buyer works
            rf"\b(?:here|dito|andito|nandito|working|work|living|live|stuck|staying|been|i'?m|i am|ako|kami)\s+"
            rf"(?:(?:here|dito|lang|pa|na)\s+)?(?:in|sa|nasa)\s+{_PLACE}",
            rf"\b(?:years?|yrs?|months?|taon|buwan|christmas|pasko)\s+(?:na\s+)?(?:(?:ako|kami)\s+)?(?:(?:here|dito)\s+)?"
            rf"(?:in|sa)\s+{_PLACE}",
            # how long they have been away ("5 years here", "anim na taon na ako dito")
            r"(?P<place>\b(?:\d+|\w+)\s+(?:na\s+)?(?:years?|yrs?|months?|taon|buwan)\s+(?:na\s+)?(?:(?:ako|kami)\s+)?"
            r"(?:(?:here|dito|abroad|away|overseas)\b|(?=(?:in|sa)\s+(?-i:[A-Z]))))",
            rf"(?:^|(?<=[.:;!?]))\s*from\s+(?P<place>(?-i:{_ABROAD}))(?=\s*[,:;.—–-])",
            rf"\b(?P<place>(?-i:{_ABROAD}))(?=\s+ofws?\b)",
            rf"\bofws?\s+(?:in|sa|from)\s+{_PLACE}",
        ),
        strict=True,
    )
)
_LOWER_WORDS = re.compile(r"[a-z]+")
# The frames that name a place after a preposition, and the test that one does (case-sensitive: a place
# is capitalised).
_FRAMED = (_DELIVERY_WORDS, _PROVINCE_WORDS, _KIN_WORDS, _ABOUT_ME)
# The frames whose place may be a colour or a design instead ("for my son in Navy Blue"): see _a_place.
_STRICT = (_KIN_WORDS, _ABOUT_ME)
_A_PLACE_AFTER = re.compile(
    r"\b(?:to|sa|in|at|from|nasa|taga|for|kay|TO|SA|IN|AT|FROM|NASA|TAGA|FOR|KAY|To|Sa|In|At|From|Nasa|Taga|For|Kay)"
    r"\s+[A-Z]"
)
# An amount in another country's money, beside a peso figure: "around 25 dollars", "(about SGD 35)",
# "mga 65 dirhams", "HK$150".
_ABROAD_MONEY = re.compile(
    r"(?:\b(?:around|about|approx\.?|approximately|roughly|mga|like)\s+)?(?:"
    r"(?:\b(?:US|USD|SGD|S|HK|HKD|NT|NTD|AUD|AU|A|CAD|CA|C|NZD|NZ))?\$\s?\d[\d,.]*(?:\s?k\b)?|[€£¥]\s?\d[\d,.]*|"
    r"\b(?:USD|SGD|HKD|AED|SAR|QAR|KWD|BHD|OMR|NTD|TWD|JPY|KRW|MYR|EUR|GBP|CAD|AUD|NZD|RM|Dhs?)\.?\s?\d[\d,.]*"
    r"(?:\s?k\b)?|"
    r"\b\d[\d,.]*(?:\s?k)?\s?(?:USD|SGD|HKD|AED|SAR|QAR|KWD|BHD|OMR|NTD|TWD|JPY|KRW|MYR|EUR|GBP|CAD|AUD|NZD|"
    r"dollars?|bucks|dirhams?|dhs|riyals?|rials?|dinars?|euros?|pounds?|yen|won|ringgit|quid)\b)",
    re.IGNORECASE,
)
_MONEY_WORDS = frozenset(
    """usd sgd hkd aed sar qar kwd bhd omr ntd twd jpy krw myr eur gbp cad aud nzd rm dh dhs dollar dollars bucks
    dirham dirhams riyal riyals rial rials dinar dinars euro euros pound pounds yen won ringgit quid""".split()
)
_PESOS = re.compile(r"₱|\bphp\b|\bpesos?\b|\bpiso\b|(?<![\w$])P\s?\d", re.IGNORECASE)


def _sent_home(query: str) -> str:
    """``query`` without where the parcel goes, where the buyer works, and an amount in foreign money said
    beside a peso figure."""
    words = set(_LOWER_WORDS.findall(query.lower()))
    framed = _A_PLACE_AFTER.search(query) is not None
    for cues, pattern in _SENT_HOME:
        if cues in _FRAMED and not framed:
            continue
        if not cues.isdisjoint(words) or (cues is _KIN_WORDS and any(w.startswith("grand") for w in words)):
            query = pattern.sub(partial(_without_place, strict=cues in _STRICT), query)
    if (not _MONEY_WORDS.isdisjoint(words) or any(sign in query for sign in "$€£¥")) and _PESOS.search(query):
        query = _ABROAD_MONEY.sub(" ", query)
    return query


def _without_place(found: re.Match[str], strict: bool = False) -> str:
    """The frame's match without its place; a place said again elsewhere stays (a riddle's "the number of
    barangays in Davao City" beside "for my Tatay in Davao City" is its clue)."""
    start, end = found.span("place")
    if strict and not _a_place(found.group("place"), found.string[end:]):
        return found.group(0)
    text = found.group(0)
    return text[: start - found.start()] + " " + text[end - found.start() :]


def _a_place(place: str, rest: str) -> bool:
    """After a person ("for my son in ...") or "I'm in ...", what reads as a place may be a colour or a
    design ("in Navy Blue", "in Hello Kitty print"): a place ends its phrase, and one of its words is a
    name no English dictionary has ("Laoag", "Guagua") or a province or a city abroad ("Cebu", "Riyadh")."""
    if not _PLACE_ENDS.match(rest):
        return False
    words = [w.lower().rstrip(".") for w in re.split(r"[\s,]+", place) if w]
    if words and (words[0] in _PROVINCE_WORDS or words[0] in _ABROAD_WORDS):
        return True
    return any(w.isalpha() and not lexicon.known(w) for w in words)


_PLACE_ENDS = re.compile(
    r"\s*(?:[,.;:!?()\-–—]|$|(?:po|pls|please|na|lang|for|and|ang|at|with|who|kasi|thanks|salamat|since|so)\b)",
    re.IGNORECASE,
)


# Invisible parts of an emoji sequence: zero-width joiner, variation selectors, the keycap mark.
_EMOJI_GLUE = frozenset("\u200d\ufe0e\ufe0f\u20e3")
_KEPT_SYMBOLS = frozenset("°℃℉")


@lru_cache(maxsize=4096)
def _symbol(ch: str) -> str:
    if ch in _EMOJI_GLUE or unicodedata.category(ch) == "Mn":
        return ""
    if ch not in _KEPT_SYMBOLS and unicodedata.category(ch) in ("So", "Sk", "Co", "Cs"):
        return " "
    return ch


# A list's title before its colon, named by a word for a collection: "bathroom refresh, same shop:
# shower curtain, bath mat, ...", "camping gear from 1 store: ...". A title without one ("Havaianas
# tsinelas for the whole family from one shop: men's 41-42, ...", "For my bakery: ...") may say what
# the items are or are for, and is read as written.
_LIST_TITLE = re.compile(r"^([^:\n]{1,80}):\s*(?=\S)")
_COLLECTION = re.compile(
    r"\b(?:gear|stuff|supplies|haul|refresh|essentials|accessories|set-?up|things|items|needs|must-?haves|"
    r"kit|bundle|list|shopping|run|restock|upgrade|makeover)\b",
    re.IGNORECASE,
)
_LIST_SEPARATORS = re.compile(r",|\+|;|\band\b|\bat\b|\bug\b")


def _untitled(unit: str) -> str:
    """A shop list's first sentence without its title's words ("camping gear", "bathroom refresh"),
    which name no item; what the title says of the shop ("one official store") stays."""
    found = _LIST_TITLE.match(unit)
    if (
        found is None
        or not _COLLECTION.search(found.group(1))
        or len(_LIST_SEPARATORS.findall(unit[found.end() :])) < 2
    ):
        return unit
    title = found.group(1)
    services = mark_services(_normalised(title))[1]
    # What the title says of the items stays: a name ("iPhone 15 accessories", "Kit Kat haul"), a
    # number, a thing a shop sells ("stroller accessories", "rice cooker and kitchen stuff").
    said = [w for k, w in enumerate(_TITLE_WORD.findall(title)) if _said_in_title(w, k)]
    kept = " ".join([*said, *(_SERVICE_PHRASES[service][0] for service in sorted(services))])
    return f"{kept}: {unit[found.end() :]}" if kept else unit[found.end() :]


_TITLE_WORD = re.compile(r"[\w'-]+")


def _said_in_title(word: str, k: int) -> bool:
    from arena.problems import lexicon

    lower = word.lower()
    if _COLLECTION.fullmatch(lower) or lower in _STOP:
        return False
    if any(ch.isdigit() for ch in word) or any(ch.isupper() for ch in word[1:]):
        return True  # "15", "iPhone", "PS5"
    if word[0].isupper() and (k > 0 or not lexicon.known(lower)):
        return True  # "Kit Kat", "Pocky"
    return lexicon.ware(lower)


# A voucher field's label: the clause after it is the voucher's value, whatever its words ("Voucher: free
# shipping" is the voucher's kind, not a service asked).
_VOUCHER_LABELS = frozenset({"voucher", "vouchers", "coupon", "voucher terms", "promo", "promo code", "voucher code"})


@lru_cache(maxsize=8)  # a query is often read twice in a row (its ask, then its sentences' values)
def split_request(query: str, intent: Intent | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The query's request sentences and its voucher sentences; context (life story, thanks) left out.
    A voucher problem may state its terms without the word "voucher" ("laptop, budget 25k, ₱1,000 off
    min spend ₱20k"); a shop list's title ("camping gear from 1 store: tent, ...") says only its scope
    and services, which are kept."""
    request, voucher = _split_request(plain(query), intent is Intent.voucher)
    if intent is Intent.shop and request:
        request[0] = _untitled(request[0])
    return tuple(request), tuple(voucher)


def _split_request(query: str, voucher_intent: bool) -> tuple[list[str], list[str]]:
    request: list[str] = []
    voucher: list[str] = []
    paragraphs = [p for p in _PARAGRAPHS.split(query) if p.strip()]
    # How many paragraphs ask something (the voucher's aside): a lone request is never dropped.
    asking = 0
    if len(paragraphs) > 1:
        asking = sum(1 for p in paragraphs if not _VOUCHER_PARAGRAPH.search(p) and _asks_something(p))
    for paragraph in paragraphs:
        if len(paragraphs) > 1 and _VOUCHER_PARAGRAPH.search(paragraph):
            # The paragraph naming the voucher states its terms and the budget, however worded;
            # a one-paragraph query is read sentence by sentence below.
            voucher.append(paragraph)
            continue
        if asking > 0 and not _asks_something(paragraph):
            continue  # a paragraph that asks for nothing (life story, thanks) beside one that asks is context
        # Sentence by sentence only in a one-paragraph query: when the voucher has its
        # own paragraph, "a snapback cap" elsewhere is an item, not the voucher's cap.
        voucher_possible = len(paragraphs) == 1 and (voucher_intent or _VOUCHER_PARAGRAPH.search(query) is not None)
        context: list[str] = []
        for whole_unit in _split_units(paragraph):
            story, unit = _story_cut(whole_unit)
            if story is not None:
                context.append(story)
            kind = _unit_kind(unit, voucher_possible)
            if kind == "voucher":
                # "skincare set with toner and serum, budget 900, shop voucher 15% off": a sentence
                # may hold the request and the terms; its clauses without a voucher word ask.
                side = voucher
                label = False  # the clause before was a field's label: "Voucher: free shipping, min ₱999"
                for clause in _CLAUSES.split(unit):
                    budget_for = _BUDGET_FOR.match(clause.strip())
                    if budget_for:  # "Budget ₱700 for 1 liter cooking oil": the budget, then what it buys
                        voucher.append(clause.strip()[: budget_for.start(1)])
                        request.append(budget_for.group(1))
                    elif clause.strip():
                        # A bare amount is the value of the clause before it ("Budget: 3,000.").
                        # "takes off twenty percent, up to ₱150", "as cashback, at most 250 pesos": an
                        # amount bounded in a clause of its own goes on the term before it (its cap).
                        bare_bound = side is voucher and _BARE_BOUND.match(clause.strip()) is not None
                        if (_HAS_LETTER.search(clause) or not side) and not bare_bound and not label:
                            side = voucher if _voucher_clause(clause) else request
                        side.append(clause.strip())
                        label = clause.strip().lower() in _VOUCHER_LABELS
            elif kind == "context":
                context.append(unit)
            else:
                request.append(unit)
        if request and context and not voucher and all(_asked_back(u) for u in request):
            # "my son wants a plush toy of whichever animal is the fastest on land. which one is that?":
            # the question asks the reader back; the ask is the sentence before it.
            request[:0] = context
        elif not request and context and not voucher:
            # "my son wants a plush toy of ...": a lone sentence asks, whatever its opening. Beside a
            # voucher sentence that holds the ask ("I would like to buy LG appliances using a ₱500-off
            # voucher ..."), the greeting and the thanks still ask nothing.
            request.extend(context)
    return request, voucher


def _read_text(query: str, intent: Intent | None = None, split: Split | None = None) -> Ask:
    """The text part of an ask; a shop task's also keeps what each sentence asks."""
    itemised = intent is Intent.shop
    request, voucher = split_request(query, intent) if split is None else split[1:]
    # Units are normalised together (one number-word pass), kept apart by a line break each.
    padded = _normalised(f" {_UNIT_MARK} ".join(request))
    for word in _CURRENCY_WORDS:
        while word in padded:
            padded = padded.replace(word, " ")
    padded, services = mark_services(padded)
    padded = JOINED_TABLE(padded)
    directions = set()
    marked = mark_ranges(padded)
    if marked is not padded:
        directions.add("btw")
        padded = marked
    padded = PRICE_TABLE(padded)
    words = padded.split()
    directions.update(w for w in words if w in _DIRECTIONS)
    numeric = [w[0].isdigit() and _NUMBER.fullmatch(w) is not None for w in words]
    numbers = sorted(w for w, is_number in zip(words, numeric, strict=True) if is_number and w != "1")
    tokens = [w if is_number else _lemma(w) for w, is_number in zip(words, numeric, strict=True)]
    concepts = sorted(
        {
            t
            for t, is_number in zip(tokens, numeric, strict=True)
            if not is_number and t not in _STOP and t != _UNIT_MARK and not (t[0].isdigit() and _ORDINAL.fullmatch(t))
        }
    )
    concepts_set = set(concepts)
    items: list[tuple[str, ...]] = []
    if itemised:
        terms: set[str] = set()
        for t, is_number in zip([*tokens, _UNIT_MARK], [*numeric, False], strict=True):
            if t == _UNIT_MARK:
                if terms:
                    items.append(tuple(sorted(terms)))
                terms = set()
            elif is_number or t in concepts_set:
                terms.add(t)
    return Ask(
        concepts=tuple(concepts),
        numbers=tuple(numbers),
        directions=tuple(sorted(directions)),
        services=tuple(sorted(services)),
        voucher_text=_voucher_terms(voucher),
        tokens=tuple(t for t in tokens if (t not in _STOP or t in _DIRECTIONS) and t != _UNIT_MARK),
        items=tuple(sorted(items)),
    )


def _voucher_terms(parts: Sequence[str]) -> tuple[str, ...]:
    if not parts:
        return ()
    text = _normalised(_BULLET.sub("\n", "\n".join(parts)))
    scope = "shop" if re.search(r"\b(?:same|one|1|single|a) (?:shop|store|seller)\b|\bshop voucher\b", text) else "all"
    kind = "percent" if re.search(r"\b(?:percent|per cent|percentage)\b", text) else "fixed"
    numbers = sorted(w for w in text.split() if w[0].isdigit() and _NUMBER.fullmatch(w) and w != "1")
    return (scope, kind, *numbers)


def asks_agree(a: Ask, b: Ask) -> bool:
    """Every constraint both asks state is equal (the reward parts only where both have them).

    Where both have a reward its constraints (prices, services, attributes) are compared
    exactly, so the text's price directions and services, which a free rewording can
    phrase in ways no table lists, are not required to match as well.
    """
    for mine, theirs in ((a.reward, b.reward), (a.voucher, b.voucher), (a.fact, b.fact)):
        if mine is not None and theirs is not None and mine != theirs:
            return False
    if a.numbers != b.numbers or a.voucher_text != b.voucher_text:
        return False
    if a.reward is None or b.reward is None:
        return a.directions == b.directions and a.services == b.services
    return True


def concepts_match(a: Ask, b: Ask) -> bool:
    """The content words are equal, up to one-letter spelling differences of longer words
    ("organiser" / "organizer" when no table lists it); any other word of one that the other
    lacks is a constraint it does not state (another brand, noun or value)."""
    if a.concepts == b.concepts:
        # Two shop tasks listing as many sub-requests must ask each the same; listed another
        # way (one sentence against bullets) only the whole bag can be compared.
        return not (len(a.items) == len(b.items) >= 2 and a.items != b.items)
    only_a = sorted(set(a.concepts) - set(b.concepts))
    only_b = sorted(set(b.concepts) - set(a.concepts))
    if len(only_a) != len(only_b):
        return False
    from rapidfuzz.distance import Levenshtein

    unmatched = list(only_b)
    for word in only_a:
        partner = next(
            (w for w in unmatched if min(len(w), len(word)) >= _SPELLING_MIN and Levenshtein.distance(w, word) <= 1),
            None,
        )
        if partner is None:
            return False
        unmatched.remove(partner)
    return True


# Words shorter than this differ in meaning by one letter too often ("black" / "block", "pen" / "pan").
_SPELLING_MIN = 6
