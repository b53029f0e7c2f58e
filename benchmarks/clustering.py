"""Leak clustering: the near-duplicate threshold measured on the official tasks, and scale.

Two measurements (both by default; ``--sweep-only`` / ``--scale-only`` pick one):

- sweep: for several MinHash thresholds, how many near-duplicate-text merges the
  900 official tasks get among themselves (they are 900 different problems, so
  each is a false merge), and, for variants written from every official task,
  how many land in their source's cluster. The variants get fresh gold ids, so
  only the text rule can find them: this measures the text rule alone.
  Positive kinds: ``reworded`` (template phrases swapped: "Show me" -> "Looking
  for", "priced above" -> "costing more than", PHP -> pesos), ``reordered``
  (clauses shuffled), ``reworded+reordered``, ``edit-2`` / ``edit-3`` (2 or 3
  random words replaced). Negative kind: ``sibling`` (a product task with its
  attribute values, option values and prices replaced by other values of the
  same keys: the same template and category, another problem), which should
  stay apart.
- scale: ``--n`` problems (default 100,000) built cheaply from the official
  tasks (content words and numbers scrambled, gold ids renamed per copy, so
  copies are distinct problems) plus ~15% variants of them, a third each:
  constraint-permuted with the same gold, reworded/reordered with the same gold,
  and reworded/reordered with renamed gold (only the text rule can link those);
  it times ``cluster_problems`` (wall, and CPU of this process and its second reader) and
  reports peak RSS, the peak proportional set size of the process and its reader together,
  and how many variants of each kind joined their source. ``--readers 1`` reads in one
  process (the default reads a pool this large in two: arena/problems/readers.py).

- embedding (``--embedding-only``): the transformer against the static table on the same
  requests (why the guard uses the table; arena/problems/meaning.py).

Run: ``.venv/bin/python benchmarks/clustering.py [--n 100000] [--data DIR] [--readers 1|2] [--embedding-only]``
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.problems.clusters import ClusterConfig, cluster_problems  # noqa: E402
from arena.problems.model import Intent, Problem, ProductReward  # noqa: E402
from arena.problems.official import load_problems  # noqa: E402
from arena.problems.signature import STOP_WORDS  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/shoppingbench"
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)

# Template rewordings a generator or a paraphrasing model produces; at most two applied per query.
REWORDINGS = (
    ("show me", "looking for"),
    ("i'm looking for", "show me"),
    ("looking for", "i want"),
    ("priced above", "costing more than"),
    ("priced between", "with a price between"),
    ("cost more than", "are priced above"),
    ("free shipping", "free delivery"),
    ("free delivery", "complimentary shipping"),
    ("php", "pesos"),
    ("pesos", "php"),
    ("over", "above"),
)


def reword(query: str) -> str:
    # Whole words only: "over" -> "above" must not turn "cover" into "cabove" (a word the
    # request does not have, which the guard rightly reads as another request).
    text, done = query.lower(), 0
    for old, new in REWORDINGS:
        pattern = re.compile(r"\b" + re.escape(old) + r"\b")
        if done < 2 and pattern.search(text):
            text, done = pattern.sub(new, text, count=1), done + 1
    return text


def reorder(query: str, rng: random.Random) -> str:
    """Clauses shuffled within each sentence or list item: a constraint moved to another item of a
    shop task would ask another problem (the guard compares shop tasks item by item)."""
    head, sep, tail = query.partition("\n\n")
    segments = re.split(r"(; |(?<=\.) )", head)
    return "".join(_reorder_clauses(segment, rng) for segment in segments) + sep + tail


def _reorder_clauses(segment: str, rng: random.Random) -> str:
    parts = re.split(r", (?:and )?| and ", segment)
    if len(parts) < 3:
        return segment
    rest = parts[1:]
    rng.shuffle(rest)
    return ", ".join([parts[0], *rest])


def edit(query: str, n: int, rng: random.Random, vocabulary: list[str]) -> str:
    words = query.split(" ")
    for i in rng.sample(range(len(words)), min(n, len(words))):
        words[i] = rng.choice(vocabulary)
    return " ".join(words)


def value_pool(problems: list[Problem]) -> dict[str, list[str]]:
    pool: dict[str, set[str]] = defaultdict(set)
    for p in problems:
        for r in p.rewards:
            for entry in r.attributes:
                for key, values in entry.items():
                    pool[key].update(v.lower() for v in values)
            for entry in r.sku_options:
                for key, value in entry.items():
                    pool[key].add(value.lower())
    return {k: sorted(v) for k, v in pool.items()}


def sibling(problem: Problem, pool: dict[str, list[str]], rng: random.Random) -> str | None:
    """The query with its constraint values swapped for other values of the same keys (None: < 2 changes)."""
    reward, query, changed = problem.rewards[0], problem.query, 0
    values = [(k, v) for a in reward.attributes for k, vs in a.items() for v in vs]
    values += [(k, v) for o in reward.sku_options for k, v in o.items()]
    for key, value in values:
        others = [v for v in pool.get(key, []) if v != value.lower()]
        pattern = re.compile(r"\b" + re.escape(value) + r"\b", re.IGNORECASE)
        if others and pattern.search(query):
            query, changed = pattern.sub(rng.choice(others), query, count=1), changed + 1
    scaled = re.sub(r"\d+", lambda m: str(int(m.group()) * 3 + 7), query)
    changed += scaled != query
    return scaled if changed >= 2 else None


def regrounded(problem: Problem, tag: str, query: str | None = None) -> Problem:
    """A copy with a new id and renamed gold ids, so only the query text can link it to its source."""
    update: dict = {"id": f"{problem.id}-{tag}", "query": query if query is not None else problem.query}
    if problem.knowledge is not None:
        product = problem.knowledge.product.model_copy(
            update={"product_id": f"{problem.knowledge.product.product_id}-{tag}"}
        )
        update["knowledge"] = problem.knowledge.model_copy(update={"product": product})
    else:
        update["rewards"] = [r.model_copy(update={"product_id": f"{r.product_id}-{tag}"}) for r in problem.rewards]
    return problem.model_copy(update=update)


def permuted(problem: Problem, tag: str, rng: random.Random) -> Problem:
    """The same gold, constraints listed in another order, prices phrased as two one-sided bounds."""

    def flip(r: ProductReward) -> ProductReward:
        prices = []
        for entry in r.price:
            for mode, (lo, hi) in entry.items():
                if mode == "between" and lo is not None and hi is not None:
                    prices += [{"less than": [0, hi]}, {"greater than": [lo, None]}]
                else:
                    prices.append({mode: [lo, hi]})
        return r.model_copy(
            update={"attributes": r.attributes[::-1], "sku_options": r.sku_options[::-1], "price": prices[::-1]}
        )

    return problem.model_copy(
        update={
            "id": f"{problem.id}-{tag}",
            "query": reorder(reword(problem.query), rng),
            "rewards": [flip(r) for r in problem.rewards[::-1]],
        }
    )


def same_cluster_rate(sources: list[Problem], variants: list[Problem], config: ClusterConfig) -> float:
    clustering = cluster_problems([*sources, *variants], config)
    of = clustering.cluster_of
    source_of = {v.id: v.extra["variant_of"] for v in variants}
    return sum(of[v.id] == of[source_of[v.id]] for v in variants) / max(1, len(variants))


def sweep(official: list[Problem], rng: random.Random) -> None:
    vocabulary = sorted({w for p in official for w in p.query.split(" ")})
    pool = value_pool(official)
    makers: dict[str, Callable[[Problem], str | None]] = {
        "reworded": lambda p: reword(p.query),
        "reordered": lambda p: reorder(p.query, rng),
        "reworded+reordered": lambda p: reorder(reword(p.query), rng),
        "edit-2": lambda p: edit(p.query, 2, rng, vocabulary),
        "edit-3": lambda p: edit(p.query, 3, rng, vocabulary),
        "sibling (negative)": lambda p: sibling(p, pool, rng) if p.intent is Intent.product else None,
    }
    kinds: dict[str, list[Problem]] = {}
    for kind, make in makers.items():
        made = []
        for p in official:
            query = make(p)
            if query is not None and query != p.query:
                variant = regrounded(p, "v", query)
                made.append(variant.model_copy(update={"extra": {**variant.extra, "variant_of": p.id}}))
        kinds[kind] = made
    header = "".join(f"{t:>8}" for t in THRESHOLDS)
    print(f"\nsweep on {len(official)} official tasks (text rule alone; variants have fresh gold ids)")
    print(f"{'threshold':28s}{header}")
    merges, clusters = [], []
    for t in THRESHOLDS:
        c = cluster_problems(official, ClusterConfig(minhash_threshold=t))
        merges.append(sum(m.reason == "near_duplicate_text" for m in c.merges))
        clusters.append(len(c.members()))
    print(f"{'official text merges':28s}" + "".join(f"{m:>8}" for m in merges))
    print(f"{'official clusters (all)':28s}" + "".join(f"{c:>8}" for c in clusters))
    for kind, variants in kinds.items():
        rates = [same_cluster_rate(official, variants, ClusterConfig(minhash_threshold=t)) for t in THRESHOLDS]
        label = f"{kind} (n={len(variants)})"
        print(f"{label:28s}" + "".join(f"{r:>8.2f}" for r in rates))
    default = ClusterConfig()
    print(f"\nshingle size at threshold {default.minhash_threshold}")
    sizes = (1, 2, 3)
    print(f"{'words per shingle':28s}" + "".join(f"{k:>8}" for k in sizes))
    configs = [default.model_copy(update={"shingle_size": k}) for k in sizes]
    official_merges = [
        sum(m.reason == "near_duplicate_text" for m in cluster_problems(official, c).merges) for c in configs
    ]
    print(f"{'official text merges':28s}" + "".join(f"{m:>8}" for m in official_merges))
    for kind, variants in kinds.items():
        rates = [same_cluster_rate(official, variants, c) for c in configs]
        print(f"{kind:28s}" + "".join(f"{r:>8.2f}" for r in rates))


def scrambled(problem: Problem, copy: int, rng: random.Random, vocabulary: list[str]) -> Problem:
    """A distinct problem of the same shape: content words and numbers replaced, gold ids renamed."""
    words = []
    for word in problem.query.split(" "):
        bare = word.strip(".,;:?!()'\"`").lower()
        if bare.isdigit():
            word = str(rng.randint(1, 5000))
        elif bare and bare not in STOP_WORDS and rng.random() < 0.7:
            word = rng.choice(vocabulary)
        words.append(word)
    return regrounded(problem, f"s{copy}", " ".join(words))


def scale(official: list[Problem], n: int, rng: random.Random, readers: int | None = None) -> None:
    vocabulary = sorted({w.strip(".,;:?!()'\"`").lower() for p in official for w in p.query.split(" ")} - STOP_WORDS)
    start = time.perf_counter()
    problems: list[Problem] = []
    variant_of: dict[str, tuple[str, str]] = {}
    copy = 0
    while len(problems) < n:
        for base in official:
            if len(problems) >= n:
                break
            distinct = scrambled(base, copy, rng, vocabulary)
            problems.append(distinct)
            if rng.random() < 0.15 and len(problems) < n:
                kind = rng.choice(("permuted", "reworded", "regrounded"))
                if kind == "permuted" and distinct.knowledge is None:
                    variant = permuted(distinct, "perm", rng)
                elif kind == "regrounded":  # only the text rule can find this one
                    variant = regrounded(distinct, "re", reorder(reword(distinct.query), rng))
                else:
                    kind = "reworded"
                    variant = distinct.model_copy(
                        update={"id": f"{distinct.id}-para", "query": reorder(reword(distinct.query), rng)}
                    )
                problems.append(variant)
                variant_of[variant.id] = (distinct.id, kind)
        copy += 1
    built = time.perf_counter() - start
    rss_before = _rss_now_mib()
    tree = TreeMemory()
    start, cpu = time.perf_counter(), _cpu_seconds()
    with tree:
        clustering = cluster_problems(problems, readers=readers)
    elapsed, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sizes = Counter(len(m) for m in clustering.members().values())
    reasons = Counter(m.reason for m in clustering.merges)
    joined: Counter[str] = Counter()
    for variant_id, (source_id, kind) in variant_of.items():
        joined[kind, clustering.cluster_of[variant_id] == clustering.cluster_of[source_id]] += 1
    kinds = sorted({kind for kind, _ in joined})
    by_kind = ", ".join(f"{k} {joined[k, True]}/{joined[k, True] + joined[k, False]}" for k in kinds)
    print(f"\nscale: {len(problems):,} problems ({len(variant_of):,} variants) built in {built:.1f}s")
    # CPU time beside wall time: on a shared host the wall clock also counts other people's work.
    print(
        f"cluster_problems ({readers or 'default'} readers): {elapsed:.1f}s wall, {cpu:.1f}s CPU of both "
        f"processes ({len(problems) / elapsed:,.0f} problems/s)"
    )
    print(
        f"RSS before clustering {rss_before:,.0f} MiB, peak RSS of the process {peak:,.0f} MiB; "
        f"peak PSS of the process tree {tree.peak_mib:,.0f} MiB, of the reader alone {tree.reader_peak_mib:,.0f} MiB "
        f"(sampled every {TreeMemory.every}s)"
    )
    print(f"clusters {sum(sizes.values()):,}; largest {max(sizes)}; sizes {dict(sorted(sizes.items()))}")
    print(f"merges by reason {dict(reasons)}")
    print(f"variants in their source's cluster: {by_kind}")


def embedding(official: list[Problem], n: int, sample: int) -> None:
    """Why the guard embeds with the static table: the transformer's rate against the table's.

    Both embed the same requests (the official queries, repeated to ``sample``), timed in this
    process one after the other; the transformer runs in sentence-transformers (torch, the
    fastest CPU path we have) with as many threads as the host grants. The rate is extrapolated
    to ``n`` requests, and the static table also embeds ``n`` requests for real.
    """
    import tempfile
    import zipfile

    import torch

    from arena.problems.meaning import MiniLM, static_embedder

    texts = [official[i % len(official)].query for i in range(sample)]
    model = MiniLM()
    with tempfile.TemporaryDirectory() as folder:
        with zipfile.ZipFile(model.path) as archive:
            archive.extractall(folder)
        from sentence_transformers import SentenceTransformer

        transformer = SentenceTransformer(folder, device="cpu", local_files_only=True)
        transformer.encode(texts[:64], batch_size=64)  # warm up
        start, cpu = time.perf_counter(), time.process_time()
        full = transformer.encode(texts, batch_size=64, normalize_embeddings=True)
        full_s, full_cpu = time.perf_counter() - start, time.process_time() - cpu
    start = time.perf_counter()
    embedder = static_embedder()
    load_s = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    static = embedder.embed(texts)
    static_s, static_cpu = time.perf_counter() - start, time.process_time() - cpu
    many = [official[i % len(official)].query + f" #{i}" for i in range(n)]
    start = time.perf_counter()
    embedder.embed(many)
    many_s = time.perf_counter() - start
    print(f"\nembedding {sample:,} requests ({torch.get_num_threads()} torch threads):")
    print(
        f"  transformer (sentence-transformers, torch): {full_s:.1f}s wall, {full_cpu:.1f}s CPU "
        f"-> {sample / full_s:,.0f}/s, {n:,} would take {n / (sample / full_s) / 60:.1f} min"
    )
    print(
        f"  static table: {static_s:.2f}s wall, {static_cpu:.2f}s CPU -> {sample / static_s:,.0f}/s "
        f"(table loaded in {load_s:.1f}s); {n:,} embedded in {many_s:.1f}s"
    )
    print(f"  shapes: transformer {full.shape}, static {static.shape}")


def _cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (a forked reader's)."""
    mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


class TreeMemory:
    """Peak proportional set size of this process and its children (the second reader), sampled in
    a thread: two processes share their libraries' pages, which the sum of their RSS counts twice
    and PSS splits between them. (The reader's ``ru_maxrss`` is no measure: it is started by a
    fork, whose moment before ``exec`` counts this whole process's pages as its own.)"""

    # Reading a process's PSS walks its page tables (tens of milliseconds for a GiB), on a core the
    # two readers want: sampled twice a second (sampled 20 times a second, the 100k clustering took
    # 10% longer). The peaks are plateaus of seconds.
    every = 0.5

    def __init__(self) -> None:
        self.peak_mib = 0.0
        self.reader_peak_mib = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        me = os.getpid()
        while not self._stop.wait(self.every):
            readers = sum(_pss_kib(pid) for pid in _children(me)) / 1024
            self.reader_peak_mib = max(self.reader_peak_mib, readers)
            self.peak_mib = max(self.peak_mib, _pss_kib(me) / 1024 + readers)


def _children(parent: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                found.append(int(entry.name))
    return found


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _rss_now_mib() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sweep-only", action="store_true")
    which.add_argument("--scale-only", action="store_true")
    which.add_argument("--embedding-only", action="store_true", help="transformer vs static table, timed")
    parser.add_argument("--sample", type=int, default=2_000, help="requests the transformer embeds")
    parser.add_argument(
        "--readers", type=int, choices=(1, 2), help="processes reading the requests (default: 2 at scale)"
    )
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"official tasks not found at {args.data}")
    official = load_problems(*sorted(args.data.glob("*.jsonl")))
    if args.embedding_only:
        embedding(official, args.n, args.sample)
        return
    if not args.scale_only:
        sweep(official, random.Random(args.seed))
    if not args.sweep_only:
        scale(official, args.n, random.Random(args.seed), args.readers)


if __name__ == "__main__":
    main()
