"""The texts whose Lucene tokens are committed in tests/support/fixtures/lucene_english_tokens.json.

Hand-picked edge cases of Lucene's StandardTokenizer (UAX#29 word breaks, 255-char
token cap), EnglishPossessiveFilter, stop words and the Porter stemmer, plus a seeded
sample of titles and requests from the official tasks. Only the texts live here; their
tokens always come from Lucene (``benchmarks/search_fidelity.py --fixtures``).
"""

from __future__ import annotations

import json
import random

from arena.settings import ArenaSettings

TASK_FILES = (
    "synthesize_product_test.jsonl",
    "synthesize_shop_test.jsonl",
    "synthesize_voucher_test.jsonl",
    "synthesize_web_simpleqa_test.jsonl",
)

TRICKY_TEXTS: tuple[str, ...] = (
    # plurals and Porter stems
    "shoes boxes glasses dresses batteries knives leaves mice geese",
    "universal grey buy buying bought 2pcs 3pcs pcs sets",
    "running runner runs ran easily happiness relational conditional",
    "caresses ponies ties caress cats feed agreed plastered motoring sing",
    # possessives, including U+2019 and upper case
    "men's MEN'S Men’s women’s WOMEN’S kids' children's James's",
    "men's women's watch for men's and women's",
    "girl’s boy's baby's o'clock rock'n'roll",
    # contractions and stop words
    "i'm don't can't won't it's we're they'll I'd you've",
    "the a an and or but of to in on for with is are be not no",
    "This is THE best of the BEST",
    # units and numbers
    "3.5mm 2.4ghz 5ghz 500ml 1.5l 12v 220v 65w 10000mah 1tb 256gb",
    "1,000 10,000.50 1.000,50 3.14159 0.5 .5 5. 1e10 -12 +12 12%",
    "3.5 mm 2.4 GHz 500 ml 100x200 1920x1080 4k 8K",
    "$19.99 ₱1,299 PHP199 99.99php 50% off",
    "nan NaN inf -inf null none N/A",
    # model numbers
    "iPhone15ProMax iPhone 15 Pro Max RTX-4090 RTX4090 A7III a7iii",
    "SM-G998B GT-710 WH-1000XM5 X1-Carbon Gen-11 USB-C Type-C",
    "mp3 mp4 h.264 x86_64 arm64-v8a ipv4 802.11ac",
    # colons, size codes
    "int:xl size:M eu:30 us:9.5 uk:8 cn:42 ratio:16:9 12:30",
    "key:value a:b:c :leading trailing: double::colon",
    # hyphens, slashes, underscores, dots
    "heavy-duty well-known t-shirt e-commerce anti-slip 2-in-1",
    "6/8/10/12 inches black/white and/or 1/2 24/7 w/o",
    "snake_case_word __init__ _private trailing_ my_file.txt",
    "U.S.A. u.s.a U.K. e.g. i.e. a.m. p.m. Dr. St.",
    "...dots... --dashes-- ***stars*** ###hash### @@at@@",
    # email, url, hashtag, mention
    "contact support@example.com or visit https://shop.example.com/p/123?x=1",
    "www.lazada.com.ph #sale @brand_official hello.world foo@bar",
    # emoji, ZWJ sequences, flags, skin tones, keycaps
    "cute 😀 cat 🐱 heart ❤️ fire🔥 sparkles✨",
    "family 👨‍👩‍👧‍👦 couple 👩‍❤️‍👨 rainbow flag 🏳️‍🌈",
    "flags 🇵🇭 🇺🇸🇬🇧 🇯🇵 wave 👋🏽 thumbs 👍🏻 keycap 1️⃣ #️⃣",
    "emoji-in-word love😍you ©2024 ®™ ★★★★★ ☆",
    # CJK, Thai, Vietnamese, Indonesian, Korean, Arabic, Cyrillic, Greek
    "中文商品 手机壳 苹果15 充电器 2米",
    "日本語のテキスト カタカナ ひらがな 東京",
    "한국어 텍스트 화장품 세트",
    "เสื้อยืดผู้ชาย ราคาถูก สีดำ",
    "Áo thun nam giá rẻ màu đen chất lượng cao",
    "Baju kaos pria murah warna hitam kualitas tinggi",
    "ملابس رجالية رخيصة Москва Привет Ελληνικά",
    # full-width and compatibility characters
    "ＦＵＬＬ－ＷＩＤＴＨ １２３ ｓｈｏｅｓ ＡＢＣ",
    "ﬁne ﬂower Ⅻ ½ ² ㎜ ㏄ ℃",
    # diacritics and mixed scripts
    "café naïve résumé Crème brûlée Zürich São Paulo",
    "iPhone手机壳 3.5mm耳机 usb充电线",
    # whitespace and control characters
    "tab\tseparated\nnew line\r\nwindows  double  space",
    "zero\u200bwidth non\u00a0breaking soft\u00adhyphen",
    # long tokens
    "x" * 300,
    "a" * 255 + " " + "b" * 256 + " end",
    "supercalifragilisticexpialidocious" * 10,
    "1234567890" * 30,
    # apostrophe oddities
    "'quoted' \"double\" ‘single’ “curly” rock 'n' roll",
    "5'11\" 12\" 6' 3''",
    # empty-ish
    "",
    "   ",
    "!!! ??? ...",
)


def task_rows(files: tuple[str, ...] = TASK_FILES) -> list[dict]:
    rows = []
    tasks_dir = ArenaSettings().shoppingbench_dir
    for name in files:
        with (tasks_dir / name).open(encoding="utf-8") as handle:
            rows.extend(json.loads(line) for line in handle if line.strip())
    return rows


def task_queries() -> list[str]:
    """The user request of every official task (900)."""
    return [row["query"] for row in task_rows()]


def task_titles() -> list[str]:
    """Every gold product title named in the official tasks' rewards."""
    titles: list[str] = []

    def visit(reward) -> None:
        if isinstance(reward, list):
            for r in reward:
                visit(r)
        elif isinstance(reward, dict):
            title = reward.get("title")
            titles.extend(title if isinstance(title, list) else [title] if isinstance(title, str) else [])

    for row in task_rows():
        visit(row["reward"])
    return list(dict.fromkeys(t for t in titles if t))


def fixture_texts(n_titles: int = 80, n_queries: int = 70, seed: int = 17) -> list[str]:
    """The tricky texts, then a seeded sample of official titles and requests."""
    rng = random.Random(seed)
    titles = task_titles()
    queries = task_queries()
    picked = rng.sample(titles, min(n_titles, len(titles))) + rng.sample(queries, min(n_queries, len(queries)))
    return list(dict.fromkeys([*TRICKY_TEXTS, *picked]))
