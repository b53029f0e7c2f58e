"""The leak-cluster guard on a held-out hand-written pool it was never tuned on.

tests/support/data/cluster_pairs_heldout.jsonl: 236 pairs (472 problems) written by a second writer who saw
neither the guard's code nor the dev set (tests/support/data/cluster_pairs_handwritten.jsonl), with its
cross-pair groups labelled by a third who saw only the requests (cluster_pairs_heldout.groups.json). The
guard's thresholds and rules were chosen on the dev set and the rule-built set only; this set is measured,
never tuned on (docs/leak-clusters.md). The floors below are what the guard measured when the set was
written (issue 31), so a change that loses held-out precision or recall fails here; they are not the
issue's 0.95 target, which the guard does not reach on this set yet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.problems.clusters import ClusterConfig
from arena.problems.pair_scores import read_groups, read_pairs, render_scores, score_pairs, score_pool

DATA = Path(__file__).resolve().parents[2] / "support" / "data"
HELDOUT = DATA / "cluster_pairs_heldout.jsonl"
HELDOUT_GROUPS = DATA / "cluster_pairs_heldout.groups.json"
# Measured with the constraint reader's fixes (branch guard2): pool precision 0.938, recall 0.920 (branch
# guard3: 0.947 / 0.920); at
# issue 31's second session 0.864 / 0.808; before it, main's guard had 0.931 / 0.254.
POOL_PRECISION_FLOOR = 0.94
POOL_RECALL_FLOOR = 0.91


def test_the_heldout_pool_pairwise_over_every_pair_of_problems(capsys):
    pairs = read_pairs(HELDOUT)
    groups = read_groups(HELDOUT_GROUPS, pairs)
    scores, clustering = score_pairs(pairs, ClusterConfig(), groups)
    pool = score_pool(pairs, clustering, groups)
    with capsys.disabled():
        print("\n" + render_scores(scores))
        print(
            f"held-out pool: precision {pool.precision:.3f}, recall {pool.recall:.3f} ({pool.tp}/{pool.fp}/{pool.fn})"
        )
    assert len(pairs.problems) == 472 and len(groups) >= 40
    assert len({s.kind for s in scores}) >= 14
    assert pool.precision >= POOL_PRECISION_FLOOR and pool.recall >= POOL_RECALL_FLOOR, pool


# A third pool, written blind for issue 31's third session by a writer who saw no code, no earlier pool and no
# docs (tests/support/data/cluster_pairs_blind3.jsonl, 240 pairs, 15 kinds, about 40 of its look-alike twins also
# reworded; its percent vouchers converted to the store's "percentage" and fractions, nothing else touched). It was
# measured once before and once after that session's rule fixes, never tuned on: main before 0.671 / 0.770, after
# 0.660 / 0.795. The rules that lifted the two earlier pools (tuned on them) did not carry over: the floor records
# that, and the gap to the 0.95 is the guard's open problem. Branch guard3 then used it for development,
# by class of failure (a riddle's fact, what a request buys, a capitalised brand replaced, a voucher's amounts):
# 0.915 / 0.885.
#
# A fourth pool, written blind in issue 31's fourth session (tests/support/data/cluster_pairs_blind4.jsonl, 240
# pairs, the same 15 kinds, about half its twins also reworded, 5 cross-pair groups) by a writer who saw no code,
# no pool and no docs, while branch guard3 was tuned on the third pool by another helper who never saw this one.
# Measured twice, never tuned on: main before guard3 0.852 / 0.754, with guard3 0.925 / 0.811. The class fixes
# carry over in part (precision), the recall of chit-chat (0.556) and deep paraphrases (0.667) does not.
# Each blind pool: its file, and the floors (precision, recall) a little under what it measured.
BLIND_POOLS = {
    3: (0.93, 0.92),
    4: (0.95, 0.97),
    # Pools 5-12 were written in issue 31's fifth session by eight writers who saw no code, no pool
    # and no docs, two at a time. Each pair was measured once on main and once on the guard as it
    # stood, then developed on; 11 and 12 only measured (docs/leak-clusters.md, "The fifth
    # session"). Pools 13 and 14 were written in the sixth session, before any of its changes, and
    # only measured. These floors pin the final figures against regression; the issue asks 0.95.
    5: (0.95, 0.94),
    6: (0.92, 0.89),
    7: (0.86, 0.92),
    # 8 lost a true pair to a rank one side adds ("the fourth planet from the sun" / "the Red Planet").
    8: (0.92, 0.79),
    9: (0.94, 0.88),
    10: (0.93, 0.92),
    # 11 and 14 lost one and three false positives to the seventh session's reading (Bisaya, titles,
    # vouchers without the word), never looked at; their recall rose.
    11: (0.93, 0.91),
    12: (0.91, 0.92),
    13: (0.96, 0.86),
    14: (0.98, 0.89),
    # Pools 16 and 17 were written at the start of the seventh session and measured before any change:
    # 16 (older shoppers, typos, listing titles) 0.922 / 0.767, only measured, never read; 17 (Bisaya
    # chat, emoji, deal forums) 0.899 / 0.545, then developed on.
    16: (0.97, 0.9),
    17: (0.96, 0.91),
    # Pool 19 was written at the start of the eighth session (small-business owners, Tagalog speech to
    # text: spelled numbers, fillers, self-corrections), measured before any change, 0.899 / 0.641, then
    # developed on. The eighth session's clue swaps lifted 5, 7, 13, 14, 16 and 17's precision.
    19: (0.95, 0.87),
    # Pool 21 was written at the start of the ninth session (personal shoppers relaying a client's
    # request, spec-sheet readers converting units, teenagers texting), measured on main before any
    # change, 0.946 / 0.759, and on the session's rules before anyone read it, 0.941 / 0.767; then
    # developed on. The ninth session lifted 6, 7, 10, 11 and 19's precision; 16 lost two true pairs to
    # vouchers said without the word and gained four twins kept apart (a tote is no pouch).
    21: (0.98, 0.93),
    # Pool 23 was written at the start of the tenth session (overseas workers ordering for family at home,
    # requests typed in capitals, re-orders after a bad delivery), measured on main before any change,
    # 0.925 / 0.603, then developed on. Two kinds of one ware in two synonym groups ("backpack" /
    # "messenger bag") lifted the precision of 13, 14 and 17 (13 lost three true pairs: "bag pack").
    23: (0.95, 0.88),
    # Pool 25 was written in the tenth session after its rules (buy-and-sell group posts, Gen-Z TikTok
    # slang, spec-style model numbers) and only measured, never read: session start 0.942 / 0.653, the
    # session's first two commits 0.933 / 0.663, final 0.930 / 0.661.
    25: (0.94, 0.72),
    # Pools 27 and 29 were written at the start of the eleventh session. 29 (Hiligaynon and Cebuano
    # shoppers, British and Australian English in the Philippines) measured on main before any change,
    # 0.961 / 0.675, then developed on. 27 (commands to a shopping chatbot or a voice assistant, pasted
    # listings and earlier orders edited) measured on main, 0.963 / 0.826, and never read.
    27: (0.96, 0.85),
    29: (0.98, 0.92),
    # Pool 31 was written in the eleventh session after its first rules (formal Tagalog, and Chavacano,
    # Zamboanga's Spanish-based creole): measured at the session start 0.656 / 0.219 and on the rules as
    # they stood 0.669 / 0.222 (Chavacano's frame words read as one brand on every request, so different
    # requests merged); then developed on (arena/problems/chavacano.py, formal Tagalog's words).
    31: (0.91, 0.64),
    # Pool 33 was written at the start of the twelfth session in plain English, as a paraphrase generator
    # rewords (sentences restructured, words replaced by synonyms or descriptions, numbers in other forms):
    # measured on main before any change, 0.966 / 0.798, then developed on. Its class fixes lifted 6, 8, 11-14,
    # 16, 17, 21, 23 and 27 (never read) with them; floors raised.
    33: (0.96, 0.91),
    # Pools 35 and 37 were written in the twelfth session in the same plain-English voice (35 a variant
    # generator restructuring every sentence, 37 two customers asking one thing in their own words), blind
    # to its rules, and only measured, never read: session start 0.985 / 0.782 and 0.967 / 0.793; after the
    # thirteenth session's generator sentences, 0.987 / 0.863 and 0.972 / 0.858 (floors raised).
    35: (0.98, 0.9),
    37: (0.96, 0.88),
    # Pools 39, 41 and 43 were written in the thirteenth session and measured on its starting code before
    # anyone read them: 39 (a model writing a benchmark's variants) 0.981 / 0.857 and 43 (a "hard variant"
    # generator: questions, conditionals, "whose ... is" clauses) 0.949 / 0.739, both then developed on;
    # 41 (everyday shoppers, each with their own habits) 0.972 / 0.858, only measured, never read.
    39: (0.98, 0.98),
    41: (0.97, 0.89),
    43: (0.97, 0.9),
    # Pools 47, 49 and 51 were written at the start of the fourteenth session and measured on its starting
    # code (68c7250) before anyone read them: 47 (a rewriting model told to share as few words with its seed
    # as it can: negations, passives, descriptions for names) 0.979 / 0.807 and 49 (crowd workers, each pair
    # in another worker's style) 0.971 / 0.869, both then developed on; 51 (a search-box query against an
    # email to the shop's concierge) 0.970 / 0.778, only measured, never read (0.974 / 0.807 at the session's end).
    47: (0.97, 0.91),
    49: (0.98, 0.92),
    51: (0.97, 0.83),
    # Pool 53 was written mid-session (a model producing a benchmark's held-out variants of its seed tasks),
    # measured on the session's starting code and on the rules as they then stood before anyone read it,
    # 0.956 / 0.868 and 0.966 / 0.872, and never read.
    53: (0.95, 0.87),
    # The fifteenth session raised 14, 16, 17, 19, 21, 25, 29, 37, 41 and 51 (a plain phrase added or word
    # replaced binds no cluster; purpose phrases; a pack holding its count).
    # Pools 57, 59 and 61 were written at the start of the fifteenth session in the benchmark's own style
    # (the writers saw seventeen official tasks): 57 its variant generator, 59 a maintainer retyping each
    # seed as a shopper would, 61 persona prompts. Measured on the session's starting code (7b301c3) before
    # anyone read them: 0.990 / 0.740, 0.959 / 0.768, 0.985 / 0.825. 59 was then developed on; 57 and 61
    # were never read, but their figures were looked at when two variants of a rule were compared. End:
    # 0.990 / 0.771, 0.975 / 0.851, 0.985 / 0.869.
    57: (0.98, 0.78),
    59: (0.97, 0.86),
    61: (0.98, 0.88),
    # Pool 63 (an evaluation team's hidden set: model rewrites and annotators' customer messages) was
    # written mid-session, measured on the start and on the rules as they then stood before anyone read it,
    # 0.993 / 0.781 and 1.000 / 0.799, and never read or used to choose anything.
    63: (0.99, 0.79),
    # The sixteenth session raised 3, 5-8, 12-14, 16, 19, 21, 23, 25, 27, 31, 35, 41, 43, 51, 53, 57, 59 and
    # 61 (a shop list's context is no item, a range in words, a voucher's amounts in other sentences, a
    # plain word replaced in a reordered request or asked with "with" binds no cluster).
    # Pools 67 and 69 were written at the start of the sixteenth session and measured on its starting code
    # (8e1de7c) before anyone read them: 67 (a model re-grounding a benchmark's held-out variants, a third
    # of its groups three requests) 0.951 / 0.901, then developed on; 69 (two annotators writing from one
    # spec card, a third restating the group) 0.970 / 0.808, never read (its figures were looked at).
    # End: 0.953 / 0.958 and 0.970 / 0.825.
    67: (0.94, 0.94),
    69: (0.96, 0.81),
    # Pool 73 (a benchmark's maintainers: seeds in the official style against a chat-box, an email and an
    # order-reversed rewrite) was written mid-session, measured on the start and on the rules as they then
    # stood before anyone read it, 0.974 / 0.898 and 0.980 / 0.919, and never read. End: 0.981 / 0.924.
    73: (0.97, 0.91),
    # Pools 75 and 77 were written at the start of the seventeenth session and measured on its starting code
    # (2b2ddbd) before anyone read them: 75 (customers' own messages against support agents' tickets of them,
    # live-selling claims restated by the seller) 0.938 / 0.489, then developed on; 77 (a search-quality
    # team: seeds in the official style against what a user types after a failed search) 0.940 / 0.782,
    # never read (its figures were looked at four times while the rules changed). End: 0.959 / 0.887 and
    # 0.942 / 0.810.
    75: (0.95, 0.87),
    77: (0.93, 0.79),
}


@pytest.mark.parametrize("number", BLIND_POOLS)
def test_a_blind_pool_pairwise_over_every_pair_of_problems(capsys, number):
    precision_floor, recall_floor = BLIND_POOLS[number]
    pairs = read_pairs(DATA / f"cluster_pairs_blind{number}.jsonl")
    groups = read_groups(DATA / f"cluster_pairs_blind{number}.groups.json", pairs)
    _, clustering = score_pairs(pairs, ClusterConfig(), groups)
    pool = score_pool(pairs, clustering, groups)
    with capsys.disabled():
        print(
            f"\nblind pool {number}: precision {pool.precision:.3f}, recall {pool.recall:.3f} "
            f"({pool.tp}/{pool.fp}/{pool.fn})"
        )
    assert len(pairs.problems) == 480 and len(groups) >= 5
    assert pool.precision >= precision_floor and pool.recall >= recall_floor, pool


@pytest.mark.parametrize(
    ("name", "precision_floor", "recall_floor"),
    [
        # 60 pairs a helper with a fresh context wrote to fool the sixth session's reading fixes (seller
        # extras, Tagalog numbers and bounds, short forms, two-word things, a product named only in the
        # voucher's sentence). Measured before anyone looked: 0.781 / 0.833 (that session's start: 0.441 /
        # 0.500); then "hindi bababa sa" is at least and "no cap" no head.
        ("attack15", 0.81, 0.86),
        # 60 pairs a helper with a fresh context wrote against the seventh session's rules (emoji,
        # Bisaya, vouchers without the word, list titles, exclamations, shorthand). Measured before anyone
        # looked: 0.569 / 0.659 (session start: 0.694 / 0.568); then list titles keep their names, numbers
        # and wares, an exclamation that adds or names is a request, "x4 packs" is no piece count.
        # The ninth session's readings merged one more pair into a cluster that already held a false
        # positive (the pool counts its pairs twice over): 0.667 / 0.682.
        ("attack18", 0.66, 0.68),
        # 60 pairs a helper with a fresh context wrote against the eighth session's rules (clue swaps,
        # acronyms said out, "T-shirt", the new Tagalog words). Measured before anyone looked: 0.771 /
        # 0.519 (session start: 0.731 / 0.365); then words of two meanings left out of the glossary (paa,
        # letra, gulong), hyphenated words ("Pa-search", "Iron-on") no names: 0.778 / 0.538; the ninth
        # session's "using a voucher" split, 0.789 / 0.577.
        ("attack20", 0.78, 0.57),
        # 60 pairs a helper with a fresh context wrote against the ninth session's rules (voucher terms
        # as a channel, relayed requests, converted sizes, values ruled out, Tagalog inflections and
        # ranks). Measured before anyone looked: 0.556 / 0.455 (session start: 0.625 / 0.455); then
        # home brands and engravings keep their titled names, "using" splits only before a voucher,
        # money off the shipping is a shipping voucher, a voucher's cap and minimum keep their roles,
        # "no pink" and "di na kailangan ng COD" rule out, a story's "third grade" is no rank.
        ("attack22", 0.77, 0.63),
        # 60 pairs a helper with a fresh context wrote against the rules as docs/leak-clusters.md stood at
        # the tenth session's start (the same thing under two names, services in Tagalog wordings, amounts
        # before and after a discount, WordNet's kinds of one thing, brands that are English words).
        # Session start 0.289 / 0.342, measured before anyone looked 0.256 / 0.289 (a town and province
        # after "for" took "PS5, Midnight Black" for a place); then the province list: 0.318 / 0.350; paying
        # the rider, the seller shouldering shipping, "ayaw niya ng itim", spoken prices after a bound, an
        # amount and up refused, "for her" / "for him", "over-ear" / "on-ear": 0.451 / 0.575.
        ("attack24", 0.45, 0.57),
        # 60 pairs a helper with a fresh context wrote against the tenth session's own rules (places
        # dropped where they matter, re-order stories holding the product, kinship words in an
        # engraving, services said by who does them). Session start 0.586 / 0.405, before anyone looked
        # 0.525 / 0.500; then a place said again stays, return shipping is no shipping, who installs,
        # cash to the rider refused, more refusals of an amount and up: 0.667 / 0.571. The sixteenth
        # session's Tagalog linker "ay" as a frame word lost one riddle ("sinag ng araw" is read as rays
        # of the day, which "ay" had hidden): 0.706 / 0.548.
        ("attack26", 0.66, 0.54),
        # 60 pairs a helper with a fresh context wrote against the rules as docs/leak-clusters.md stood at
        # the eleventh session's start (re-order stories, places, kinds of one ware, refusals, spoken
        # prices). Session start 0.350 / 0.500, before anyone looked 0.359 / 0.500; then "not one centavo
        # over", ₱1,499.99 against below ₱1,500, "twelve-fifty max", "2k pataas ayoko na", "a fifth off",
        # "the shipping fee should be ₱0", "ay mali, Rapoo pala": 0.465 / 0.714.
        ("attack28", 0.46, 0.71),
        # 60 pairs a helper with a fresh context wrote against the eleventh session's own rules (Visayan,
        # Chavacano and formal Tagalog tables, grands, refusals, centavo bounds). Session start 0.361 / 0.406,
        # before anyone looked 0.356 / 0.500; then halves of a grand and "thou", "north of" / "south of",
        # "₱800 is my floor", "not spending a single peso more than", "20 000 mAh", "kinse porsyento", a
        # model's "+" / "Plus", a product's generation, "one-piece" / "two-piece": 0.500 / 0.656.
        ("attack30", 0.50, 0.65),
        # 240 pairs a helper with a fresh context wrote against the rules as docs/leak-clusters.md stood at
        # the twelfth session's start (bounds said with negations the rules miss, voucher terms in bound
        # words, regional nouns read as names, twins differing where no reader looks). Session start
        # 0.574 / 0.634, before anyone looked 0.575 / 0.642.
        ("attack34", 0.57, 0.64),
        # 240 pairs a helper with a fresh context wrote against the rules as docs/leak-clusters.md stood after
        # the thirteenth session's generator sentences (brands that are words, corrections, per-item
        # bounds, floors said as ceilings, accessories that are not, services in yet other sentences).
        # Session start 0.649 / 0.676, before anyone looked 0.677 / 0.746; then corrections across dashes
        # drop the name corrected away, "X is my starting point" / "the least I expect", "won't go over"
        # read in a sentence that opens like a story, the brand's own shop, shipping "on the seller", "not
        # a centavo for the courier", "setup shouldn't cost extra", Cebuano "ug tunga", a bound for each
        # item against one for the whole list: 0.721 / 0.789. The fifteenth session's pair-only words (a plain
        # phrase added or word replaced in a product's sentence binds no cluster) let three of its twins
        # through ("sofa bed", "COD or card, whichever", tents "at ₱2,500 or less leak"): 0.700 / 0.822.
        ("attack45", 0.69, 0.78),
        # 240 pairs a helper with a fresh context wrote against the rules as docs/leak-clusters.md stood after
        # the fourteenth session's first rules (bounds refused in words no list holds, the brand preferred
        # beside the one passed over, an old thing's size asked again, services declined, WordNet's kinds of
        # one thing, riddles' facts by nickname). Session start 0.568 / 0.644, before anyone looked 0.576 /
        # 0.655; then "skip anything", "I'll pass", "is a no for me", "already too much", "X instead of Y",
        # "X over Y any day", "not X, Y lang", "COD is not a must", "only uses X", "so same capacity", paying
        # at the doorstep, amounts a peso apart in an edit, "already", "my daughter wants it in pink": 0.657 / 0.762.
        # The sixteenth session's "asks more" of a plain word binding no cluster let six of its twins join
        # through a third request: 0.642 / 0.782.
        ("attack55", 0.64, 0.77),
        # 240 pairs a helper with a fresh context wrote against the fifteenth session's rules (a plain phrase
        # added or word replaced binds no cluster, purpose phrases, typos, acronyms, vouchers in prose),
        # measured before anyone looked: session start 0.757 / 0.715, the rules as they stood 0.756 / 0.752;
        # then "a copy of" no longer drops "copy" where no "this / the" follows: 0.762 / 0.752.
        # The sixteenth session's pair-only rules ("asks more" of a plain word, a plain word replaced in a
        # reordered request) let fourteen more of its pairs of problems join through a third request:
        # 0.732 / 0.765.
        ("attack65", 0.72, 0.75),
        # 240 pairs a helper with a fresh context wrote against the sixteenth session's rules (a shop list's
        # context, items renamed, unread items, "our flag", ranges in words, a voucher's amounts in other
        # sentences, a measure's label). Session start 0.934 / 0.815, before anyone looked 0.950 / 0.859;
        # then a lone acronym country against "our flag", "our" read as the Philippines: 0.952 / 0.861.
        ("attack71", 0.94, 0.85),
    ],
)
def test_an_attack_pool_holds_its_floor(name, precision_floor, recall_floor):
    pairs = read_pairs(DATA / f"cluster_pairs_{name}.jsonl")
    groups = read_groups(DATA / f"cluster_pairs_{name}.groups.json", pairs)
    _, clustering = score_pairs(pairs, ClusterConfig(), groups)
    pool = score_pool(pairs, clustering, groups)
    assert len(pairs.pairs) in (60, 240)
    assert pool.precision >= precision_floor and pool.recall >= recall_floor, pool
